/** `--help` text: commands, flags, environment and exit codes. */
import { VERSION } from "../version.ts";

export const EXIT = { ok: 0, failure: 1, usage: 2, config: 3 } as const;

export const HELP = `t3code-mcp ${VERSION} — MCP server that runs coding threads on remote T3 Code machines

Usage: t3code-mcp [command] [flags]   (an unknown flag or argument is exit 2; <command> --help)

Commands:
  serve            (default) the MCP server at http://HOST:PORT/mcp, configured by env + t3code.toml
  stdio            the same tools over MCP stdio, for clients that launch local servers (no HTTP port;
                     config and state default to $XDG_CONFIG_HOME/t3code-mcp/t3code.toml and
                     $XDG_STATE_HOME/t3code-mcp/t3code-mcp.sqlite)
  demo             serve plus an embedded simulated T3 machine "demo" (project "demo") on loopback
  sim              a standalone simulated T3 Code server
                     --host H  --port P (default 3773)  --token T  --project TITLE=PATH (repeatable)
                     --protocol 1|2|3 (3: newer than this connector)  --step-ms N
                     --compat prerelease  as the pre-release V2 engine (no deliveryIntent, getTurnItem,
                       searchThreads, thread.fork, attachments, project create, queued-run edit,
                       approval options, system_notice items, background work and its wake runs)
                     --pairing  also print a single-use pairing link (for pair; its tokens last 30 days)
  check [--json]   validate the config and probe every machine (token expiry included: it fails within
                     7 days of it); exit 0 only when all pass
  pair <pairing-url> [--machine NAME] [--token-file PATH] [--url URL]
                   exchange a T3 pairing link (t3 auth pairing create --scope orchestration:read
                     --scope orchestration:operate) for a token with exactly those scopes, verify it,
                     write it alone to a 0600 file (default <state dir>/tokens/<machine>.token) and
                     print the config lines; no config needed. --machine: the config name (default
                     from T3's label); --url: the server's origin when the link's is not reachable
                     from here. The link works once; exit 1 when T3 refuses (the line says what next)
  audit [--since DURATION|ISO] [--client NAME] [--thread ID] [--json]
                   the audit of every change a client asked for (allowed or refused), newest first;
                     --since 7d / 24h / 30m or an ISO time; --json: one object a line
  backup <file>    copy the state file into a new <file> while the server runs (a consistent sqlite
                     snapshot; never writes over an existing file); restore it with the server stopped
  hook secret      print a new random whsec_… signing secret (for T3CODE_MCP_HOOK_SECRET)
  hook test        send one signed webhook.test event to the configured hook now (not through the
                     outbox) and print the receiver's status and time; exit 0 on 2xx, 1 otherwise
  healthcheck      GET the local /healthz; exit 0 when it answers 200 (container health checks)
  --version        print the version
  --help           this text

Environment:
  T3CODE_MCP_CONFIG          config file (default ./t3code.toml)
  T3CODE_MCP_HOST            listen address (default 127.0.0.1)
  T3CODE_MCP_PORT            listen port (default 8000)
  T3CODE_MCP_STATE           sqlite state (default $STATE_DIRECTORY/t3code-mcp.sqlite or ./data/t3code-mcp.sqlite)
  T3CODE_MCP_TOKEN           bearer required on /mcp and /metrics when set (16+ characters; empty = unset)
  T3CODE_MCP_ALLOWED_HOSTS   extra Host names accepted (comma list)
  T3CODE_MCP_ALLOWED_ORIGINS browser origins accepted (comma list)
  T3CODE_MCP_HOOK_URL        webhook for events (unset: events are recorded, not sent)
  T3CODE_MCP_PUBLIC_URL      [server] public_url: how people reach this server (approval links), an origin
  T3CODE_MCP_HOOK_TOKEN      bearer sent with every webhook
  T3CODE_MCP_HOOK_SECRET     whsec_… secret: Standard Webhooks signatures
  T3CODE_MCP_WAIT_TIMEOUT_S  default t3_wait timeout in seconds (default 600, max 3600)
  T3CODE_MCP_TASK_TTL_S      how long an MCP task (a t3_wait answered as a task) lives (default 86400, max 604800)
  T3CODE_MCP_MAX_HELD        [server] max_held: dispatches held at once, all clients (default 1000)
  T3CODE_MCP_PING_TIMEOUT_S  silence on a machine's socket after which it is offline (default 10, max 300)
  T3CODE_MCP_LOG_LEVEL       debug | info | warn | error (default info)
  T3CODE_MCP_CLIENT          stdio: run as this [clients.<name>] (its rights and reach; default full rights)
  each machine's token_env   that machine's T3 bearer token (or token_file: a file holding it, read at
                             every connect; a bare name is looked up in $CREDENTIALS_DIRECTORY)

Exit codes:
  0 success · 1 failure (a check failed, healthcheck got no 200, hook test got no 2xx, the server failed) · 2 bad command line · 3 bad configuration
`;
