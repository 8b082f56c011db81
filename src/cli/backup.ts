/** `seedcast backup FILE` (online, consistent) and `seedcast restore FILE [--force]` (offline). */
import type { Config } from "../config";
import type { Deps } from "../deps";
import { BackupError, S3_BACKUP_REFUSAL, createBackup, restoreBackup } from "../modules/backup/service";
import { UsageError, output, parse } from "./args";

/** Writes a backup archive of the data dir while the server may be running. */
export async function backupCommand(deps: Deps, argv: string[]): Promise<void> {
  const { positionals, json } = parse(argv, []);
  const file = positionals[0];
  if (!file) throw new UsageError("usage: seedcast backup FILE");
  const manifest = await createBackup(deps, file);
  output(json, { file, ...manifest }, `backup written to ${file} (${manifest.mediaFiles} media files)`);
}

/** Restores an archive into DATA_DIR; the server must be stopped. */
export async function restoreCommand(config: Readonly<Config>, argv: string[]): Promise<void> {
  const { positionals, flags, json } = parse(argv, [], ["force"]);
  const file = positionals[0];
  if (!file) throw new UsageError("usage: seedcast restore FILE [--force]");
  if (config.media.kind === "s3") throw new BackupError(S3_BACKUP_REFUSAL);
  const result = await restoreBackup(config.dataDir, file, flags.force === true);
  output(
    json,
    { file, ...result },
    `restored ${file} into ${config.dataDir}${result.movedAside ? ` (previous contents moved to ${result.movedAside})` : ""}`,
  );
}
