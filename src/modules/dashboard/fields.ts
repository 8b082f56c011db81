/**
 * Form controls with their error beside them: each control's error sits right under it, the control carries
 * `aria-invalid` and `aria-describedby` pointing at the error (and hint), and the first control in error gets
 * `autofocus`, so the browser puts the cursor there without any script. Values typed are passed back in.
 */
import { AppError } from "../../lib/errors";
import { Html, html } from "../../lib/html";

/** Errors by form field name, in words a person uses. */
export type FieldErrors = Record<string, string>;

export interface ControlOptions {
  name: string;
  /** The element id, when several forms on a page share field names (default: the name). */
  id?: string;
  label: string;
  value?: string;
  type?: string;
  hint?: string;
  required?: boolean;
  /** Extra attributes, trusted markup built with `html`. */
  attrs?: Html;
  /** Rows for a textarea. */
  rows?: number;
}

/** Tracks which control is the first in error on the page being built. */
export class FormState {
  private focused = false;
  constructor(readonly errors: FieldErrors = {}) {}

  private describe(o: ControlOptions): { invalid: Html; describedBy: Html; autofocus: Html; error: Html; hint: Html } {
    const id = o.id ?? o.name;
    const message = this.errors[o.name];
    const ids = [o.hint ? `${id}-hint` : "", message ? `${id}-error` : ""].filter(Boolean).join(" ");
    const autofocus = message && !this.focused ? html` autofocus` : html``;
    if (message) this.focused = true;
    return {
      invalid: message ? html` aria-invalid="true"` : html``,
      describedBy: ids ? html` aria-describedby="${ids}"` : html``,
      autofocus,
      error: message ? html`<p class="field-error" id="${id}-error">${message}</p>` : html``,
      hint: o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : html``,
    };
  }

  /** A labelled input with its hint and error. */
  input(o: ControlOptions): Html {
    const d = this.describe(o);
    return html`<div class="row${this.errors[o.name] ? " has-error" : ""}"><label for="${o.id ?? o.name}">${o.label}</label>
  <input id="${o.id ?? o.name}" name="${o.name}" type="${o.type ?? "text"}" value="${o.value ?? ""}"${o.required ? html` required` : ""}${d.invalid}${d.describedBy}${d.autofocus}${o.attrs ?? ""}>
  ${d.error}${d.hint}</div>`;
  }

  /** A labelled textarea with its hint and error. */
  textarea(o: ControlOptions): Html {
    const d = this.describe(o);
    return html`<div class="row${this.errors[o.name] ? " has-error" : ""}"><label for="${o.id ?? o.name}">${o.label}</label>
  <textarea id="${o.id ?? o.name}" name="${o.name}" rows="${o.rows ?? 6}"${o.required ? html` required` : ""}${d.invalid}${d.describedBy}${d.autofocus}${o.attrs ?? ""}>${o.value ?? ""}</textarea>
  ${d.error}${d.hint}</div>`;
  }

  /** A labelled select. `options` are [value, label]. */
  select(o: ControlOptions & { options: readonly (readonly [string, string])[] }): Html {
    const d = this.describe(o);
    return html`<div class="row${this.errors[o.name] ? " has-error" : ""}"><label for="${o.id ?? o.name}">${o.label}</label>
  <select id="${o.id ?? o.name}" name="${o.name}"${d.invalid}${d.describedBy}${d.autofocus}${o.attrs ?? ""}>
    ${o.options.map(([value, label]) => html`<option value="${value}"${value === (o.value ?? "") ? html` selected` : ""}>${label}</option>`)}
  </select>
  ${d.error}${d.hint}</div>`;
  }

  /** A fieldset (radio or checkbox group) with its error under the legend. `inner` is the controls. */
  group(name: string, legend: string, inner: Html, hint?: string): Html {
    const d = this.describe({ name, label: legend, hint });
    // A fieldset cannot take focus: the first control inside it does, when the group is the first in error.
    const controls = d.autofocus.value ? new Html(inner.value.replace(/<input (?![^>]*type="hidden")/, "<input autofocus ")) : inner;
    return html`<fieldset id="${name}-group"${d.invalid}${d.describedBy}><legend>${legend}</legend>${d.error}${d.hint}${controls}</fieldset>`;
  }
}

/**
 * The field errors of a service refusal: `details[].field` (API names) mapped to form names and to plain words by
 * `words(field, problem)`; a refusal without details goes to `fallbackField`.
 */
export function errorsOf(
  error: AppError,
  fieldNames: Record<string, string>,
  words: (field: string, problem: string, message: string) => string,
  fallbackField?: string,
): { fields: FieldErrors; general: string | null } {
  const details = Array.isArray(error.extra.details) ? (error.extra.details as { field?: unknown; problem?: unknown }[]) : [];
  const fields: FieldErrors = {};
  for (const d of details) {
    const apiField = typeof d.field === "string" ? d.field : "";
    const name = fieldNames[apiField];
    if (name && !fields[name]) fields[name] = words(apiField, typeof d.problem === "string" ? d.problem : "", error.message);
  }
  if (Object.keys(fields).length > 0) return { fields, general: null };
  if (fallbackField) return { fields: { [fallbackField]: words("", "", error.message) }, general: null };
  return { fields, general: words("", "", error.message) };
}
