import { z } from "zod";

/**
 * Settings the service never reads: the CLI's and the SDK's (sdk/src/credentials.ts,
 * cli/service-commands.ts). Declared here only so that docs/configuration.md lists every
 * variable agentline reads; nothing parses them with this schema.
 */
export const clientSettings = z
  .object({
    AGENTLINE_API_KEY: z.string().optional().meta({
      secret: true,
      description:
        "`agentline mcp`: the API key or `agent_token` whose account the stdio MCP server acts for. The CLI's API commands and the SDK: the key to use instead of the one `agentline login` saved.",
    }),
    AGENTLINE_BASE_URL: z.string().optional().meta({
      description: "The CLI's API commands and the SDK: the service to talk to (else the saved login's, else `http://127.0.0.1:8080`).",
    }),
    AGENTLINE_CONFIG: z.string().optional().meta({
      defaultText: "`$XDG_CONFIG_HOME/agentline/config.json`",
      description:
        "The file `agentline login` saves its key in and the CLI and the SDK read it from (`~/.config/agentline/config.json` when `XDG_CONFIG_HOME` is unset).",
    }),
  })
  .meta({ title: "The CLI and the SDK", description: "Read by `agentline mcp`, the CLI's API commands and the SDK, never by the service." });
