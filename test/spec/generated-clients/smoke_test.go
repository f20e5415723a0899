// Drives the generated Go client (client.go, same package) against a running Omnigate; prints one JSON line.
// The chat completion goes through the client's own send: the generator's CreateChatCompletion streams and
// drops the request body, so the generated method cannot make a call the server accepts.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
)

func TestSmoke(t *testing.T) {
	url, key := os.Getenv("OMNIGATE_URL"), os.Getenv("OMNIGATE_KEY")
	var requestID string
	watch := Middleware{OnResponse: func(resp *http.Response) { requestID = resp.Header.Get("x-request-id") }}
	ctx := context.Background()
	api := New(Config{ServerURL: url, Auth: Auth{Bearer: func() string { return key }}, Middleware: []Middleware{watch}})
	list, err := api.ListModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	models := []string{}
	for _, model := range list.Data {
		models = append(models, model.Id)
	}

	op := operations["createChatCompletion"]
	headers, query := resolveAuth(op.Security, api.config.Auth)
	body, _ := json.Marshal(map[string]any{"model": "local:chat", "messages": []map[string]string{{"role": "user", "content": "Hello from Go"}}})
	resp, err := send(ctx, &api.config, requestSpec{OperationID: op.ID, Method: op.Method, URL: buildURL(url, op.Path, map[string]string{}),
		Headers: headers, Query: query, Body: bytes.NewReader(body), ContentType: "application/json"})
	if err != nil {
		t.Fatal(err)
	}
	var completion ChatCompletion
	if err := decodeJSON(resp, &completion); err != nil {
		t.Fatal(err)
	}

	wrong := New(Config{ServerURL: url, Auth: Auth{Bearer: func() string { return "og-wrong-key" }}, Middleware: []Middleware{watch}})
	var failure map[string]any
	if _, err := wrong.ListModels(ctx); err != nil {
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			t.Fatal(err)
		}
		envelope, _ := apiErr.Body.(map[string]any)["error"].(map[string]any)
		failure = map[string]any{"status": apiErr.Status, "code": envelope["code"], "requestId": requestID}
	}
	content := ""
	if len(completion.Choices) > 0 && completion.Choices[0].Message.Content != nil {
		content = *completion.Choices[0].Message.Content
	}
	out, _ := json.Marshal(map[string]any{"models": models, "chat": content, "error": failure})
	fmt.Println(string(out))
}
