// Font files imported `with { type: "file" }` resolve to a path string (embedded when compiled).
declare module "*.ttf" {
  const path: string;
  export default path;
}

// libvips shared library embedded by src/lib/sharp.ts (the package's `./binary` export points at the .so).
// Declared here because helpers may only add files under their own paths; it is a file path at runtime.
declare module "@img/sharp-libvips-linux-x64/binary" {
  const path: string;
  export default path;
}
