/** Capability groups, their scope strings, and what each role may hold (decisions.md §2). */

export const SCOPES = ["read", "create", "schedule", "voice"] as const;
export type Scope = (typeof SCOPES)[number];

/** Dashboard labels of the groups. */
export const SCOPE_LABELS: Record<Scope, string> = {
  read: "Read access",
  create: "Content creation",
  schedule: "Scheduling",
  voice: "Brand voice",
};

export const ROLES = ["owner", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** The groups a member of each role may hold; a key never exceeds its member's current role. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: SCOPES,
  editor: SCOPES,
  viewer: ["read"],
};

/** True when `value` is one of the scope strings. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** True when `value` is one of the roles. */
export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** A key's effective groups: its own ∩ those its member's role allows, in canonical order. */
export function effectiveScopes(keyScopes: readonly string[], role: Role): Scope[] {
  const allowed = ROLE_SCOPES[role];
  return SCOPES.filter((s) => keyScopes.includes(s) && allowed.includes(s));
}

/** Parses the stored comma-separated scopes. */
export function parseStoredScopes(stored: string): Scope[] {
  return stored.split(",").filter(isScope);
}
