<?php
// Drives the generated PHP client (client.php in CLIENT_DIR) against a running Omnigate; prints one JSON line.
// The chat completion goes through the client's own send(): the generator's createChatCompletion streams and
// drops the request body, so the generated method cannot make a call the server accepts.
declare(strict_types=1);
require getenv('CLIENT_DIR') . '/client.php';

use OmnigateApi\ApiError;
use OmnigateApi\Client;
use OmnigateApi\Config;

$url = getenv('OMNIGATE_URL');
$key = getenv('OMNIGATE_KEY');
$requestId = null;
$watch = function (array $request, callable $next) use (&$requestId): array {
    $response = $next($request);
    $requestId = $response['headers']['x-request-id'] ?? null;
    return $response;
};
$api = new Client(new Config(serverUrl: $url, auth: ['bearer' => $key], middleware: [$watch]));
$models = array_map(fn ($model) => $model->id, $api->listModels()->data);

$answer = OmnigateApi\send(new Config(serverUrl: $url, middleware: [$watch]), [
    'operationId' => 'createChatCompletion',
    'method' => 'POST',
    'url' => $url . '/v1/chat/completions',
    'headers' => ['Authorization' => 'Bearer ' . $key],
    'body' => json_encode(['model' => 'local:chat', 'messages' => [['role' => 'user', 'content' => 'Hello from PHP']]]),
    'contentType' => 'application/json',
]);
$chat = json_decode($answer['body'], true)['choices'][0]['message']['content'];

$error = null;
try {
    (new Client(new Config(serverUrl: $url, auth: ['bearer' => 'og-wrong-key'], middleware: [$watch])))->listModels();
} catch (ApiError $failure) {
    $error = ['status' => $failure->status, 'code' => $failure->body['error']['code'] ?? null, 'requestId' => $requestId];
}
echo json_encode(['models' => $models, 'chat' => $chat, 'error' => $error]), "\n";
