/** A cookie-keeping form client over app.handle for in-process dashboard tests (never follows redirects). */
import { BASE, type World } from "./world";

export const PASSWORD = "correct horse battery";

/** A tiny cookie-keeping client over app.handle; it never follows redirects, so tests see them. */
export class DashboardClient {
  readonly cookies = new Map<string, string>();
  lastHtml = "";
  constructor(private readonly world: World, private readonly base = BASE) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private absorb(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = (pair ?? "").indexOf("=");
      const name = (pair ?? "").slice(0, eq).trim();
      const value = (pair ?? "").slice(eq + 1).trim();
      if (/Max-Age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: string, path: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}) {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size > 0) h.cookie = this.cookieHeader();
    let body: string | undefined;
    if (form) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
      body = params.toString();
      h["content-type"] = "application/x-www-form-urlencoded";
    }
    const response = await this.world.app.handle(new Request(`${this.base}${path}`, { method, headers: h, body }));
    this.absorb(response);
    const text = await response.text();
    if ((response.headers.get("content-type") ?? "").startsWith("text/html")) this.lastHtml = text;
    return { status: response.status, location: response.headers.get("location"), headers: response.headers, text };
  }

  get(path: string) {
    return this.request("GET", path);
  }

  /** A multipart POST with the last page's CSRF token and one file. */
  async upload(path: string, file: File, headers: Record<string, string> = {}) {
    const data = new FormData();
    data.append("_csrf", this.csrf());
    data.append("file", file);
    const h: Record<string, string> = { ...headers, cookie: this.cookieHeader() };
    const response = await this.world.app.handle(new Request(`${this.base}${path}`, { method: "POST", headers: h, body: data }));
    this.absorb(response);
    const text = await response.text();
    if ((response.headers.get("content-type") ?? "").startsWith("text/html")) this.lastHtml = text;
    return { status: response.status, location: response.headers.get("location"), headers: response.headers, text };
  }

  /** The CSRF token of the last page seen. */
  csrf(): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(this.lastHtml);
    if (!match?.[1]) throw new Error("no CSRF field on the last page");
    return match[1];
  }

  /** Loads `page`, then posts `form` with that page's CSRF token. */
  async submit(pagePath: string, action: string, form: Record<string, string | string[]>) {
    await this.get(pagePath);
    return this.request("POST", action, { _csrf: this.csrf(), ...form });
  }

  async login(email: string, password = PASSWORD) {
    await this.get("/login");
    return this.request("POST", "/login", { _csrf: this.csrf(), email, password });
  }
}
