/**
 * Layering goes one way only (docs/architecture.md, "Dependency direction"). Reads every `import … from "…"`,
 * `export … from "…"`, `import "…"` and `import("…")` under src/ (type-only imports count: a cycle through types is
 * still a cycle) and checks each edge between top-level directories against the allowed direction, then that no
 * cycle runs between directories, nor through the root files. The root files (main.ts, app.ts, bootstrap.ts,
 * system-jobs.ts: composition; config.ts, deps.ts, version.ts: declarations every layer reads) stand outside the
 * directory layers, except that lib/ and db/ import none of them.
 *
 * Tables by dialect (docs/storage-layer-plan.md §4.2): outside src/db/, tables are imported from db/tables (bound to
 * the dialect the process runs on), never from db/schema or db/pg/schema, which give only types and the enum and
 * constant lists to the rest of src/.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Glob } from "bun";
import { Table, is } from "drizzle-orm";

const SRC = resolve(import.meta.dir, "../src");

/** What each directory may import from the others (besides itself). Lower layers first. */
const ALLOWED: Record<string, readonly string[]> = {
  lib: [],
  db: ["lib"],
  jobs: ["lib"],
  // The gauges read the store at scrape time (queue depth, credit totals).
  metrics: ["lib", "db"],
  generation: ["lib"],
  auth: ["lib", "db"],
  store: ["lib", "db"],
  publishing: ["lib", "db", "metrics", "store", "generation", "jobs"],
  http: ["lib", "db", "metrics", "auth", "store", "jobs"],
  web: ["lib", "db", "auth", "http"],
  modules: ["lib", "db", "metrics", "auth", "store", "generation", "jobs", "publishing", "http", "web"],
  cli: ["lib", "db", "metrics", "auth", "store", "generation", "jobs", "publishing", "http", "web", "modules"],
};
/** Directories that may import no root file either (lib/ is app-agnostic; db/ is schema and its driver). */
const NO_ROOT_FILES = new Set(["lib", "db"]);
/** Root files every layer may read; they import only each other and the bottom layers. */
const ROOT_DECLARATIONS = new Set(["config.ts", "deps.ts", "version.ts", "bootstrap.ts"]);
const BELOW_ROOT_DECLARATIONS = new Set(["lib", "db", "store", "auth", "generation", "metrics", "jobs"]);

const IMPORT_PATTERNS = [
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?[^"'`;]*?\sfrom\s*["']([^"']+)["']/g,
  /(?:^|[\s;])import\s*["']([^"']+)["']/g,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
];

interface Edge {
  from: string;
  to: string;
  fromFile: string;
  toFile: string;
}

/** The top-level directory of a path under src/, or the path itself for a root file (`deps.ts`). */
function unitOf(path: string): string {
  const slash = path.indexOf("/");
  return slash === -1 ? path : path.slice(0, slash);
}

/** The file a relative import names: `x.ts` / `x.tsx` as written or added, or the directory's `x/index.ts`. */
function resolveImport(srcDir: string, path: string): string {
  for (const candidate of [path, `${path}.ts`, `${path}.tsx`, `${path}/index.ts`]) {
    const full = join(srcDir, candidate);
    if (existsSync(full) && statSync(full).isFile()) return candidate;
  }
  return path;
}

/** Every relative import between files of src/ that crosses a top-level directory, a root file or a module. */
function crossingImports(srcDir: string): Edge[] {
  const edges: Edge[] = [];
  for (const file of new Glob("**/*.{ts,tsx}").scanSync(srcDir)) {
    const text = readFileSync(join(srcDir, file), "utf8");
    for (const pattern of IMPORT_PATTERNS) {
      for (const match of text.matchAll(pattern)) {
        const spec = match[1]!;
        if (!spec.startsWith(".")) continue;
        const target = resolveImport(srcDir, relative(srcDir, resolve(srcDir, dirname(file), spec)));
        if (target.startsWith("..")) continue; // outside src/ (package.json)
        const from = unitOf(file);
        const to = unitOf(target);
        if (to === from && from !== "modules") continue; // between two modules: kept for the module cycle check
        edges.push({ from, to, fromFile: file, toFile: target });
      }
    }
  }
  return edges;
}

/** Units on a cycle (strongly connected components larger than one), each sorted. */
function cycles(edges: readonly Edge[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!graph.has(from)) graph.set(from, new Set());
    if (!graph.has(to)) graph.set(to, new Set());
    graph.get(from)!.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

const describeEdge = (e: Edge) => `${e.fromFile} -> ${e.toFile}`;

describe("layering", () => {
  const edges = crossingImports(SRC);

  test("the import reader sees the code (a reader that finds nothing would pass everything)", () => {
    const directories = readdirLayers();
    expect(directories.sort()).toEqual(Object.keys(ALLOWED).sort());
    // Known edges of every kind the patterns read: a static import, a type-only import, an `export … from`.
    expect(edges.some((e) => e.fromFile === "modules/schedule/index.ts" && e.to === "http")).toBe(true);
    expect(edges.some((e) => e.fromFile === "publishing/connector.ts" && e.to === "db")).toBe(true);
    expect(edges.some((e) => e.fromFile === "modules/assets/service.ts" && e.toFile === "store/media-url.ts")).toBe(true);
    expect(edges.some((e) => e.fromFile === "main.ts" && e.to === "cli")).toBe(true);
    expect(edges.some((e) => e.fromFile === "bootstrap.ts" && e.toFile === "generation/index.ts")).toBe(true);
    expect(edges.length).toBeGreaterThan(200);
  });

  test("every directory imports only from the directories below it", () => {
    const wrong = edges.filter((e) => {
      if (!(e.from in ALLOWED) || e.from === e.to) return false; // a root file importing, or one module another
      if (e.to in ALLOWED) return !ALLOWED[e.from]!.includes(e.to);
      return NO_ROOT_FILES.has(e.from); // a root file imported
    });
    expect([...new Set(wrong.map(describeEdge))]).toEqual([]);
  });

  test("config.ts, deps.ts, version.ts and bootstrap.ts import only each other and the bottom layers", () => {
    const wrong = edges.filter((e) => ROOT_DECLARATIONS.has(e.from) && !ROOT_DECLARATIONS.has(e.to) && !BELOW_ROOT_DECLARATIONS.has(e.to));
    expect([...new Set(wrong.map(describeEdge))]).toEqual([]);
  });

  test("no cycle runs between directories", () => {
    expect(cycles(edges.filter((e) => e.from in ALLOWED && e.to in ALLOWED))).toEqual([]);
  });

  test("no cycle runs through the root files either (deps.ts, bootstrap.ts, config.ts ...)", () => {
    expect(cycles(edges)).toEqual([]);
  });

  test("no cycle runs between two modules either (they call each other only one way)", () => {
    const moduleOf = (path: string) => path.split("/").slice(0, 2).join("/");
    const between = edges
      .filter((e) => e.from === "modules" && e.to === "modules")
      .map((e) => ({ ...e, from: moduleOf(e.fromFile), to: moduleOf(e.toFile) }))
      .filter((e) => e.from !== e.to);
    expect(between.length).toBeGreaterThan(10);
    expect(cycles(between)).toEqual([]);
  });

  test("the cycle finder finds a cycle when there is one", () => {
    const planted: Edge[] = [
      { from: "publishing", to: "modules", fromFile: "publishing/a.ts", toFile: "modules/b/service.ts" },
      { from: "modules", to: "publishing", fromFile: "modules/b/service.ts", toFile: "publishing/a.ts" },
      { from: "lib", to: "db", fromFile: "lib/x.ts", toFile: "db/y.ts" },
    ];
    expect(cycles(planted)).toEqual([["modules", "publishing"]]);
  });
});

/**
 * Files outside src/db/ that may import tables from a schema module itself, and why: each needs one dialect's table
 * objects whatever dialect the process runs on.
 */
const SCHEMA_TABLE_IMPORTS_ALLOWED: Record<string, string> = {
  "modules/migrate-data/plan.ts": "copies SQLite into PostgreSQL: it walks both schemas' tables side by side",
  "modules/seeds/search-pg.ts": "PostgreSQL-only search: the tsvector column and seq exist only in the pg-core mirror",
  "modules/seeds/term-stats-pg.ts": "PostgreSQL-only stopword statistics over the same tsvector column",
};

/** The schema modules (db/schema, db/pg/schema and their files) as paths under src/. */
function isSchemaModule(target: string): boolean {
  return /^db\/(pg\/)?schema(\/[^/]+)?\.ts$/.test(target);
}

interface SchemaImport {
  file: string;
  target: string;
  /** The value names imported (type-only ones left out); "*" for a namespace import or `export *`. */
  names: string[];
}

const SCHEMA_IMPORT_PATTERNS = [
  /(?:^|[\s;])(import|export)\s+(type\s+)?([^"'`;]*?)\s*from\s*["']([^"']+)["']/g,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
];

/** The value names an import or export clause brings in: `{ a, type B, c as d }`, `* as x`, `x` (default), `*`. */
function valueNames(clause: string): string[] {
  const names: string[] = [];
  const braces = clause.match(/\{([^}]*)\}/);
  const outside = clause.replace(/\{[^}]*\}/, "").replace(/,/g, " ").trim();
  if (/\*/.test(outside)) names.push("*");
  else if (outside) names.push("default");
  if (braces) {
    for (const part of braces[1]!.split(",")) {
      const spec = part.trim();
      if (!spec || /^type\s/.test(spec)) continue;
      names.push(spec.split(/\s+as\s+/)[0]!.trim());
    }
  }
  return names;
}

/** Every import of a schema module by a file of src/ outside db/. */
function schemaImports(srcDir: string): SchemaImport[] {
  const found: SchemaImport[] = [];
  for (const file of new Glob("**/*.{ts,tsx}").scanSync(srcDir)) {
    if (file.startsWith("db/")) continue;
    const text = readFileSync(join(srcDir, file), "utf8");
    const targetOf = (spec: string) => resolveImport(srcDir, relative(srcDir, resolve(srcDir, dirname(file), spec)));
    for (const match of text.matchAll(SCHEMA_IMPORT_PATTERNS[0]!)) {
      const target = targetOf(match[4]!);
      if (!match[4]!.startsWith(".") || !isSchemaModule(target)) continue;
      found.push({ file, target, names: match[2] ? [] : valueNames(match[3]!) });
    }
    for (const match of text.matchAll(SCHEMA_IMPORT_PATTERNS[1]!)) {
      const target = targetOf(match[1]!);
      if (match[1]!.startsWith(".") && isSchemaModule(target)) found.push({ file, target, names: ["*"] });
    }
  }
  return found;
}

/** The imports among `imports` that bring in a table object (`*` counts: it holds every table). */
async function tableImports(srcDir: string, imports: readonly SchemaImport[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const imp of imports) {
    const mod = (await import(join(srcDir, imp.target))) as Record<string, unknown>;
    const tables = imp.names.filter((name) => name === "*" || name === "default" || is(mod[name], Table));
    if (tables.length > 0) wrong.push(`${imp.file} -> ${imp.target}: ${tables.join(", ")}`);
  }
  return wrong;
}

describe("tables by dialect", () => {
  const imports = schemaImports(SRC);

  test("the reader sees the schema imports (types and constants count, tables are told apart)", async () => {
    expect(imports.length).toBeGreaterThan(5);
    // Planted: a table, a type beside a constant, a namespace, a type-only import.
    const planted: SchemaImport[] = [
      { file: "modules/x/a.ts", target: "db/schema/index.ts", names: valueNames("{ accounts, type AccountRow }") },
      { file: "modules/x/b.ts", target: "db/schema/scheduled-posts.ts", names: valueNames("{ type PostStatus, POST_STATUSES }") },
      { file: "modules/x/c.ts", target: "db/pg/schema/index.ts", names: valueNames("* as pg") },
      { file: "modules/x/d.ts", target: "db/schema/seeds.ts", names: [] },
    ];
    expect(await tableImports(SRC, planted)).toEqual(["modules/x/a.ts -> db/schema/index.ts: accounts", "modules/x/c.ts -> db/pg/schema/index.ts: *"]);
  });

  test("no file outside db/ imports a table from db/schema or db/pg/schema (services use db/tables)", async () => {
    const checked = imports.filter((imp) => !(imp.file in SCHEMA_TABLE_IMPORTS_ALLOWED));
    expect(await tableImports(SRC, checked)).toEqual([]);
  });

  test("every allowed exception still exists and still needs its exception", async () => {
    for (const file of Object.keys(SCHEMA_TABLE_IMPORTS_ALLOWED)) {
      const own = imports.filter((imp) => imp.file === file);
      expect({ file, tables: (await tableImports(SRC, own)).length > 0 }).toEqual({ file, tables: true });
    }
  });
});

/** The top-level directories of src/. */
function readdirLayers(): string[] {
  const seen = new Set<string>();
  for (const file of new Glob("*/**").scanSync(SRC)) seen.add(file.slice(0, file.indexOf("/")));
  return [...seen];
}
