// The upload page's browser script, imported `with { type: "file" }`: a path Bun.file reads (embedded when compiled).
declare module "*.client.js" {
  const path: string;
  export default path;
}
