/** The one version string: `--version`, `/healthz`, the MCP server info and the image label agree. */
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
