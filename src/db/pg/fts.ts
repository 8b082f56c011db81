/**
 * Seed search on PostgreSQL: the DDL drizzle-kit cannot generate (an extension, functions), kept in code like
 * src/db/fts.ts is for SQLite. The search column itself (a generated tsvector with a GIN index) is said in drizzle, in
 * src/db/pg/schema/seeds.ts, and built from the functions below.
 *
 * NB for the migrator: PG_PRE_MIGRATIONS must run BEFORE the drizzle migrations of migrations-pg/ (the generated
 * column `seeds.search` calls `seedcast_search_words`, so CREATE TABLE seeds fails without it), each once, recorded by
 * tag like every other migration. They are idempotent (IF NOT EXISTS / OR REPLACE) all the same.
 *
 * Why these functions (decisions.md §5 and §11: whole words and word prefixes of title, content and category, case- and
 * accent-insensitive, the same as SQLite's FTS5 `unicode61 remove_diacritics 2`):
 * - `seedcast_unaccent`: unaccent() is only STABLE (it looks its dictionary up by name through search_path), and a
 *   generated column may only call IMMUTABLE functions. The usual wrapper names the dictionary and the function with
 *   their schema, which is what makes calling it IMMUTABLE honest.
 * - `seedcast_search_words`: one text → its words, lower-cased, unaccented and separated by single spaces. Lower-casing
 *   uses ICU's root locale (`und-x-icu`), so Greek, Cyrillic or accented capitals fold whatever the database's own
 *   locale (a `C` database's lower() folds ASCII only). Every character FTS5 treats as a separator (ASCII punctuation,
 *   Unicode punctuation, symbols and emoji, listed as ranges so that no locale decides) becomes a space BEFORE the
 *   text-search parser sees it: so `example.com`, `foo-bar`, `a@b.c`, `<b>`, `l’équipe` are words separated as FTS5
 *   separates them, instead of the host names, e-mail addresses, hyphenated compounds and tags PostgreSQL's default
 *   parser would otherwise recognise (and under which `example` alone would not be found).
 *   The same function normalises the search words (src/modules/seeds/search-pg.ts), so both sides agree.
 */
import type { EmbeddedMigration } from "../migrations-embed";

/**
 * The characters that separate words, as a PostgreSQL regular-expression bracket expression: ASCII other than
 * letters and digits (the underscore included), C1 controls and Latin-1 punctuation and symbols (but not ª º µ ² ³ ¹ ¼
 * ½ ¾, which FTS5 treats as letters and numbers), × ÷, General Punctuation (spaces, dashes, quotes, ellipsis, zero-width
 * joiners), currency signs, arrows, mathematical and technical symbols, box drawing, shapes, miscellaneous symbols and
 * dingbats (not the circled digits), Supplemental Punctuation, CJK punctuation, variation selectors, CJK compatibility
 * and small forms, fullwidth ASCII punctuation, and the emoji and pictograph planes.
 */
export const SEARCH_SEPARATORS =
  "[\\u0001-\\u002f\\u003a-\\u0040\\u005b-\\u0060\\u007b-\\u00a9\\u00ab-\\u00b1\\u00b4\\u00b6-\\u00b8\\u00bb\\u00bf\\u00d7\\u00f7" +
  "\\u2000-\\u206f\\u20a0-\\u20cf\\u2190-\\u245f\\u2500-\\u2775\\u2794-\\u2bff\\u2e00-\\u2e7f" +
  "\\u3000-\\u3004\\u3008-\\u3020\\u3030\\u303d-\\u303f\\ufe00-\\ufe19\\ufe30-\\ufe6f\\ufeff" +
  "\\uff01-\\uff0f\\uff1a-\\uff20\\uff3b-\\uff40\\uff5b-\\uff65\\U0001f000-\\U0001faff]+";

/** The text-search configuration of the search column and of every search query: no stemming, no stopword list. */
export const SEARCH_TS_CONFIG = "simple";

/** PostgreSQL ignores a word of this many bytes or more when it builds a tsvector (MAXSTRLEN). */
export const SEARCH_MAX_WORD_BYTES = 2047;

const UNACCENT_V1 = `
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.seedcast_unaccent(text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.seedcast_search_words(text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT btrim(regexp_replace(public.seedcast_unaccent(lower($1 COLLATE "und-x-icu")), '${SEARCH_SEPARATORS}', ' ', 'g')) $$;
`;

/**
 * Tagged migrations to apply BEFORE migrations-pg/ (drizzle's), in order, each once. A later change of the functions
 * gets a new tag (and, since the generated column's values were computed by the old one, rewrites the column).
 */
export const PG_PRE_MIGRATIONS: readonly EmbeddedMigration[] = [{ tag: "pg_search_functions_v1", sql: UNACCENT_V1 }];
