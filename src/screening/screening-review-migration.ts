import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

/**
 * Screening reviews: each hit of a customer (an entity or a user) or a payment's counterparty
 * against the lists, held until an operator decides it. At most one undecided review per
 * subject; an entity is held while any review of it or of its users is undecided or confirmed.
 */
export const screeningReviewMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table screening_reviews (
        id uuid primary key,
        seq bigint generated always as identity unique,
        partner_id uuid not null,
        entity_id uuid not null,
        subject text not null check (subject in ('entity', 'user', 'payout', 'incoming')),
        subject_id uuid not null,
        cause text not null
          check (cause in ('create', 'update', 'rescreen', 'payout', 'incoming')),
        screened jsonb not null,
        hits jsonb not null,
        top_score double precision not null check (top_score >= 0 and top_score <= 1),
        status text not null check (status in ('open', 'clear_pending', 'cleared', 'confirmed')),
        opened_at timestamptz not null,
        clear_requested_by text,
        clear_requested_by_name text,
        decided_by text,
        decided_by_name text,
        decided_at timestamptz,
        reason text
      );
      create unique index screening_reviews_undecided on screening_reviews (subject, subject_id)
        where status in ('open', 'clear_pending');
      create index screening_reviews_entity on screening_reviews (entity_id)
        where status <> 'cleared';
      create index screening_reviews_subject on screening_reviews (subject_id);
      create index screening_reviews_status on screening_reviews (status, seq);
    `)
  },
}
