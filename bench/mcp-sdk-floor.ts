/**
 * The floor of any /mcp built on the official SDK (bench/mcp.ts): a bare Bun.serve whose only work is the SDK's
 * web-standard handler (`createMcpHandler`, the one /mcp uses, with the same per-request server model) serving one
 * tool named get_credits that answers a constant. No authentication, no database, no rate limit, no schemas; the body
 * is parsed once and handed over as `parsedBody`, as endpoint.ts does. Whatever /mcp adds comes on top of this.
 * Prints its port.
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "floor", version: "1.0.0" });
  server.registerTool("get_credits", { description: "A constant answer." }, () => ({
    content: [{ type: "text", text: "100 credits available, 0 reserved." }],
    structuredContent: { balance: 100, reserved: 0 },
  }));
  return server;
});

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  fetch: async (request) => handler.fetch(request, { parsedBody: JSON.parse(await request.text()) as unknown }),
});
console.log(server.port);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
