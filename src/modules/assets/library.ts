/** The whole image library in one plugin for app.ts: asset routes, upload links and their page, and /media. */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { mediaModule } from "../media";
import { uploadsModule } from "../uploads";
import { assetsModule } from ".";

/** Mounts /api/v1/assets*, /upload/<token> and /media/<id>.<ext>. */
export function imageLibraryModule(deps: Deps) {
  return new Elysia().use(assetsModule(deps)).use(uploadsModule(deps)).use(mediaModule(deps));
}
