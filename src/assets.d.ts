/** File imports (`with { type: "file" }`) resolve to a path that Bun.file can read, inside the compiled binary too. */
declare module "*.css" {
  const path: string;
  export default path;
}

declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}

declare module "*.svg" {
  const path: string;
  export default path;
}
