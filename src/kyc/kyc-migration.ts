import type { ColumnType, Generated, Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// The tables of KYC and KYB evidence and of the audit trail.
// - kyc_submissions: one row per submission of a user's KYC (`owner_kind` user) or an
//   entity's KYB (`entity`); a newer submission supersedes a pending or rejected one.
// - kyc_documents: each document of a submission, copied out of the partner's dropbox at
//   submission: its bytes (`content`, emptied by retention), their SHA-256 and the
//   operator's decision on it. Never updated but for the decision and retention.
// - kyb_profiles: a business entity's KYB metadata, as the partner last set it.
// - kyb_directors: the directors the company registry named for the entity, with what the
//   partner and the operator added.
// - audit_log: who (credential id) did what to which subject, and when; append-only.
export const kycDocumentsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table kyc_submissions (
        id uuid primary key,
        seq bigint generated always as identity,
        partner_id uuid not null,
        owner_kind text not null check (owner_kind in ('user', 'entity')),
        owner_id uuid not null,
        state text not null check (state in ('pending', 'approved', 'rejected', 'superseded')),
        submitted_at timestamptz not null,
        submitted_by text not null,
        decided_at timestamptz,
        decided_by text,
        rejection_reason text,
        superseded_at timestamptz
      );
      create index kyc_submissions_owner on kyc_submissions (owner_id, seq);
      create index kyc_submissions_waiting on kyc_submissions (owner_kind, state, submitted_at);
      create table kyc_documents (
        id uuid primary key,
        submission_id uuid not null references kyc_submissions(id),
        position integer not null,
        partner_id uuid not null,
        owner_id uuid not null,
        director_id text,
        doc_type text not null,
        name text not null,
        original_filename text,
        content_type text not null,
        size integer not null,
        sha256 text not null,
        content bytea,
        decision text check (decision in ('approved', 'rejected')),
        rejection_reason text,
        submitted_at timestamptz not null,
        deleted_at timestamptz
      );
      create index kyc_documents_submission on kyc_documents (submission_id);
      create table kyb_profiles (
        entity_id uuid primary key references entities(id),
        partner_id uuid not null,
        metadata jsonb not null,
        updated_at timestamptz not null
      );
      create table kyb_directors (
        entity_id uuid not null references entities(id),
        director_id text not null,
        position integer not null,
        name text not null,
        id_type text not null,
        full_name text,
        email text,
        metadata jsonb not null,
        approved boolean not null default false,
        verified boolean not null default false,
        verification_sent boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        primary key (entity_id, director_id)
      );
      create table audit_log (
        id uuid primary key,
        seq bigint generated always as identity,
        subject_id uuid not null,
        action text not null,
        actor text not null,
        at timestamptz not null,
        details jsonb not null
      );
      create index audit_log_subject on audit_log (subject_id, seq);
    `)
  },
}

type Json<T> = ColumnType<T, string, string>
type Timestamp = ColumnType<Date, Date, Date>
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>

export interface KycSubmissionTable {
  id: string
  seq: Generated<string>
  partner_id: string
  owner_kind: 'user' | 'entity'
  owner_id: string
  state: 'pending' | 'approved' | 'rejected' | 'superseded'
  submitted_at: Timestamp
  submitted_by: string
  decided_at: NullableTimestamp
  decided_by: string | null
  rejection_reason: string | null
  /** When a later submission replaced this one (retention counts from it). */
  superseded_at: NullableTimestamp
}

export interface KycDocumentTable {
  id: string
  submission_id: string
  /** The document's place in its submission, as the request named them. */
  position: number
  partner_id: string
  owner_id: string
  director_id: string | null
  doc_type: string
  name: string
  original_filename: string | null
  content_type: string
  size: number
  sha256: string
  content: Uint8Array | null
  decision: 'approved' | 'rejected' | null
  rejection_reason: string | null
  submitted_at: Timestamp
  deleted_at: NullableTimestamp
}

export interface KybProfileTable {
  entity_id: string
  partner_id: string
  metadata: Json<Record<string, unknown>>
  updated_at: Timestamp
}

export interface KybDirectorTable {
  entity_id: string
  director_id: string
  position: number
  name: string
  id_type: string
  full_name: string | null
  email: string | null
  metadata: Json<Record<string, unknown>>
  approved: ColumnType<boolean, boolean | undefined, boolean>
  verified: ColumnType<boolean, boolean | undefined, boolean>
  verification_sent: ColumnType<boolean, boolean | undefined, boolean>
  created_at: Timestamp
  updated_at: Timestamp
}


export interface KycTables {
  kyc_submissions: KycSubmissionTable
  kyc_documents: KycDocumentTable
  kyb_profiles: KybProfileTable
  kyb_directors: KybDirectorTable
}
