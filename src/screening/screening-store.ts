import { randomUUID } from 'node:crypto'
import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../schema.ts'
import type { EntryKind, ListEntry, ListSource } from './list-entry.ts'
import type { ScreeningListLoadsTable } from './screening-tables.ts'

// The SQL of the screening tables: loads (versions), their entries, the parts of an upload.

export type LoadRow = Selectable<ScreeningListLoadsTable>

/** Entries written per insert. */
const entries_per_insert = 500

export interface NewLoad {
  id: string
  source: ListSource
  list_date: string | null
  sha256: string
  bytes: number
  loaded_at: Date
  loaded_by_credential: string
  loaded_by_label: string
  upload_id: string
}

/** An entry as the index is built from it. */
export interface IndexedEntryRow extends ListEntry {
  id: string
  load_id: string
  source: ListSource
}

export class ScreeningStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Writes a load and its entries and makes it its source's active one, the one it replaces
   * inactive; the entries of loads older than that one go. Run in the caller's transaction.
   */
  async writeLoad(trx: Kysely<Database>, load: NewLoad, entries: ListEntry[]): Promise<void> {
    const replaced = await trx.updateTable('screening_list_loads')
      .set({ active: false, replaced_at: load.loaded_at })
      .where('source', '=', load.source).where('active', '=', true)
      .returning('id').executeTakeFirst()
    await trx.insertInto('screening_list_loads')
      .values({ ...load, entry_count: entries.length, active: true, replaced_at: null })
      .execute()
    for (let from = 0; from < entries.length; from += entries_per_insert) {
      const rows = entries.slice(from, from + entries_per_insert)
        .map((entry, i) => entryRow(load.id, from + i, entry))
      await trx.insertInto('screening_entries').values(rows).execute()
    }
    // History keeps every load's row; the entries of the active load and the one it replaced.
    const older = trx.selectFrom('screening_list_loads').select('id')
      .where('source', '=', load.source).where('active', '=', false)
      .$if(replaced !== undefined, (q) => q.where('id', '!=', replaced!.id))
    await trx.deleteFrom('screening_entries').where('load_id', 'in', older).execute()
  }

  /** The active loads' ids, in order: the version the index must be built from. */
  async activeVersion(): Promise<string> {
    const rows = await this.db.selectFrom('screening_list_loads').select('id')
      .where('active', '=', true).orderBy('id').execute()
    return rows.map((r) => r.id).join(',')
  }

  /** Every entry of the active loads, in the order of their loads and places. */
  async activeEntries(): Promise<IndexedEntryRow[]> {
    const rows = await this.db.selectFrom('screening_entries as e')
      .innerJoin('screening_list_loads as l', 'l.id', 'e.load_id')
      .select(['e.id', 'e.load_id', 'l.source', 'e.list_ref', 'e.kind', 'e.names',
        'e.dates_of_birth', 'e.documents', 'e.programs'])
      .where('l.active', '=', true).orderBy('l.id').orderBy('e.position').execute()
    return rows.map((r) => ({ ...r, source: r.source as ListSource, kind: r.kind as EntryKind }))
  }

  /** Loads, newest first. */
  async loads(limit: number): Promise<LoadRow[]> {
    return this.db.selectFrom('screening_list_loads').selectAll()
      .orderBy('seq', 'desc').limit(limit).execute()
  }

  async activeLoads(): Promise<LoadRow[]> {
    return this.db.selectFrom('screening_list_loads').selectAll()
      .where('active', '=', true).orderBy('source').execute()
  }

  async loadOfUpload(uploadId: string): Promise<LoadRow | undefined> {
    return this.db.selectFrom('screening_list_loads').selectAll()
      .where('upload_id', '=', uploadId).executeTakeFirst()
  }

  /** Keeps a part (a part received again is kept once); answers the upload's parts so far. */
  async putPart(part: { upload_id: string; part: number; parts: number; sha256: string;
      content: Uint8Array; received_at: Date }): Promise<Array<{ part: number; parts: number;
      sha256: string }>> {
    await this.db.insertInto('screening_upload_parts').values(part)
      .onConflict((c) => c.columns(['upload_id', 'part']).doNothing()).execute()
    return this.db.selectFrom('screening_upload_parts').select(['part', 'parts', 'sha256'])
      .where('upload_id', '=', part.upload_id).execute()
  }

  /** The upload's parts' bytes, in order. */
  async partContents(uploadId: string): Promise<Uint8Array[]> {
    const rows = await this.db.selectFrom('screening_upload_parts').select('content')
      .where('upload_id', '=', uploadId).orderBy('part').execute()
    return rows.map((r) => r.content)
  }

  async dropParts(db: Kysely<Database>, uploadId: string): Promise<void> {
    await db.deleteFrom('screening_upload_parts').where('upload_id', '=', uploadId).execute()
  }

  /** Parts of uploads left unfinished since before `before`. */
  async dropStaleParts(before: Date): Promise<void> {
    await this.db.deleteFrom('screening_upload_parts').where('received_at', '<', before).execute()
  }
}

function entryRow(loadId: string, position: number, entry: ListEntry) {
  return {
    id: randomUUID(), load_id: loadId, position, list_ref: entry.list_ref, kind: entry.kind,
    names: JSON.stringify(entry.names), dates_of_birth: JSON.stringify(entry.dates_of_birth),
    documents: JSON.stringify(entry.documents), programs: JSON.stringify(entry.programs),
  }
}
