/** The ceiling: a bare Bun.serve answering "ok". Prints its port. */
const server = Bun.serve({ port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1", fetch: () => new Response("ok") });
console.log(server.port);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
