/**
 * HTML building with escaping by default: `html\`...\`` escapes every interpolated value unless it is already Html
 * (built by this tag) or an array of Html. Nothing in the dashboard or the other pages concatenates markup.
 */

/** Markup that is already safe to emit. Only `html` and `raw` make one. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

/** Template tag: interpolations are escaped; nested `html` results and arrays of them are kept. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new Html(out);
}

/** Trusted markup from a constant in this module's code (never from input). */
export function raw(trusted: string): Html {
  return new Html(trusted);
}

/** `selected`/`checked`-style boolean attribute. */
export function attrIf(condition: boolean, name: string): Html {
  return new Html(condition ? ` ${name}` : "");
}

/**
 * A short human date for tables, in `timeZone` when given (the person's zone), else UTC; the full ISO value goes in
 * a <time datetime>.
 */
export function timeTag(iso: string | null | undefined, fallback = "—", timeZone?: string): Html {
  if (!iso) return html`${fallback}`;
  if (timeZone && timeZone !== "UTC") {
    const f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    const p = Object.fromEntries(f.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
    return html`<time datetime="${iso}">${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}</time>`;
  }
  const shown = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return html`<time datetime="${iso}">${shown}</time>`;
}
