/** `seedcast backup FILE` (online, consistent) and `seedcast restore FILE [--force]` (offline). */
import { bootstrap } from "../bootstrap";
import type { Config } from "../config";
import { silentLogger } from "../lib/log";
import { BackupError, POSTGRES_BACKUP_REFUSAL, S3_BACKUP_REFUSAL, createBackup, restoreBackup } from "../modules/backup/service";
import { UsageError, output, parse } from "./args";

export { POSTGRES_BACKUP_REFUSAL };

/** Refusals that hold before anything is opened: the archive could not be whole. */
function refuseUnlessAppliance(config: Readonly<Config>): void {
  if (config.database.kind === "postgres") throw new BackupError(POSTGRES_BACKUP_REFUSAL);
  if (config.media.kind === "s3") throw new BackupError(S3_BACKUP_REFUSAL);
}

/** Writes a backup archive of the data dir while the server may be running. */
export async function backupCommand(config: Readonly<Config>, argv: string[]): Promise<void> {
  const { positionals, json } = parse(argv, []);
  const file = positionals[0];
  if (!file) throw new UsageError("usage: seedcast backup FILE");
  refuseUnlessAppliance(config);
  const deps = await bootstrap(config, { log: silentLogger });
  try {
    const manifest = await createBackup(deps, file);
    const where = config.instanceSecret ? "; the instance secret is not in it: keep INSTANCE_SECRET, restore needs it" : "";
    output(json, { file, ...manifest }, `backup written to ${file} (${manifest.mediaFiles} media files${where})`);
  } finally {
    await deps.store.close();
  }
}

/** Restores an archive into DATA_DIR; the server must be stopped. */
export async function restoreCommand(config: Readonly<Config>, argv: string[]): Promise<void> {
  const { positionals, flags, json } = parse(argv, [], ["force"]);
  const file = positionals[0];
  if (!file) throw new UsageError("usage: seedcast restore FILE [--force]");
  refuseUnlessAppliance(config);
  const result = await restoreBackup(config.dataDir, file, flags.force === true, config.instanceSecret?.bytes ?? null);
  const notes = [
    result.movedAside ? `previous contents moved to ${result.movedAside}` : "",
    result.instanceSecret?.source === "environment" ? "start the server with the same INSTANCE_SECRET" : "",
  ].filter(Boolean);
  output(json, { file, ...result }, `restored ${file} into ${config.dataDir}${notes.length ? ` (${notes.join("; ")})` : ""}`);
}
