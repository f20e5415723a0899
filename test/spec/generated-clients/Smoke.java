// Drives the generated Java client (Client.java, same package) against a running Omnigate; prints one JSON
// line. The chat completion goes through the client's own send: the generator's createChatCompletion streams
// and drops the request body, so the generated method cannot make a call the server accepts.
package omnigateapi;

import java.net.http.HttpResponse;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

public final class Smoke {
    public static void main(String[] args) {
        String url = System.getenv("OMNIGATE_URL");
        String key = System.getenv("OMNIGATE_KEY");
        String[] requestId = {null};
        Client.Middleware watch = new Client.Middleware() {
            @Override
            public void onResponse(HttpResponse<InputStream> response) {
                requestId[0] = response.headers().firstValue("x-request-id").orElse(null);
            }
        };
        Client.Config config = new Client.Config().serverUrl(url).middleware(watch);
        config.auth.bearer(key);
        Client api = new Client(config);
        List<String> models = new ArrayList<>();
        // The generator names the `data` field data2() (data clashes with a name of its own).
        for (Client.ModelObject model : api.listModels().data2()) {
            models.add(model.id());
        }

        String body = "{\"model\":\"local:chat\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello from Java\"}]}";
        Client.RequestSpec spec = new Client.RequestSpec("createChatCompletion", "POST", url + "/v1/chat/completions")
            .headers(new java.util.LinkedHashMap<>(Map.of("Authorization", "Bearer " + key)))
            .body(body.getBytes(StandardCharsets.UTF_8), "application/json");
        Object chat = Client.decodeJson(Client.send(config, spec));

        Client.Config wrongConfig = new Client.Config().serverUrl(url).middleware(watch);
        wrongConfig.auth.bearer("og-wrong-key");
        Object error = null;
        try {
            new Client(wrongConfig).listModels();
        } catch (Client.ApiException failure) {
            error = Map.of("status", failure.status, "body", failure.body, "requestId", String.valueOf(requestId[0]));
        }
        System.out.println(Client.Json.write(Map.of("models", models, "chat", chat, "error", error == null ? "none" : error)));
    }
}
