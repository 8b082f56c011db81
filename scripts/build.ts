/** `bun run build`: writes the single executable to dist/seedcast. */
import { compile } from "./compile";

const OUTFILE = "dist/seedcast";
const started = performance.now();
await compile("src/main.ts", OUTFILE);
const size = Bun.file(OUTFILE).size;
console.log(`built ${OUTFILE} (${(size / 1024 / 1024).toFixed(1)} MiB) in ${Math.round(performance.now() - started)} ms`);
