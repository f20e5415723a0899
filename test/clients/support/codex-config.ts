/** The config.toml of docs/real-clients: Omnigate as the only provider, every look-up of other hosts off. */
export function codexConfig(origin: string, model: string): string {
  return `model = "${model}"
model_provider = "omnigate"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
remote_plugin = false
apps = false
plugin_sharing = false
tool_suggest = false
skill_mcp_dependency_install = false
in_app_updates = false

[model_providers.omnigate]
name = "Omnigate"
base_url = "${origin}/v1"
env_key = "OMNIGATE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`;
}
