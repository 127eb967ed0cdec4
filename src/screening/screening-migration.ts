import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

/**
 * Sanctions lists: each load a version (one active per source, replaced in one transaction),
 * its entries, and the parts of a list file being uploaded.
 */
export const screeningMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table screening_list_loads (
        id uuid primary key,
        seq integer generated always as identity unique,
        source text not null check (source in ('un_consolidated', 'ofac_sdn')),
        list_date text,
        sha256 text not null,
        bytes integer not null check (bytes > 0),
        entry_count integer not null check (entry_count >= 0),
        loaded_at timestamptz not null,
        loaded_by_credential text not null,
        loaded_by_label text not null,
        upload_id uuid not null unique,
        active boolean not null,
        replaced_at timestamptz
      );
      create unique index screening_list_loads_active on screening_list_loads (source)
        where active;
            create table screening_entries (
        id uuid primary key,
        load_id uuid not null references screening_list_loads (id),
        position integer not null,
        list_ref text not null,
        kind text not null check (kind in ('individual', 'entity', 'vessel', 'aircraft')),
        names jsonb not null,
        dates_of_birth jsonb not null,
        documents jsonb not null,
        programs jsonb not null,
        unique (load_id, position)
      );
      create table screening_upload_parts (
        upload_id uuid not null,
        part integer not null check (part >= 0),
        parts integer not null check (parts >= 1),
        sha256 text not null,
        content bytea not null,
        received_at timestamptz not null,
        primary key (upload_id, part)
      );
      create index screening_upload_parts_received on screening_upload_parts (received_at);
    `)
  },
}
