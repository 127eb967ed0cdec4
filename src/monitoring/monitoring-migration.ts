import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// Transaction monitoring (RULINGS "Financial crime controls"): the rules' parameters (seeded
// with the defaults), the sweep's place in the ledger's postings, the movements evaluated,
// alerts grouped into one open case per customer, the cases' notes and the reports filed.
// The seeded parameters are the defaults of monitoring-rules-contract.ts as shipped.
export const monitoringMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      create table monitoring_rules (
        rule text primary key,
        enabled boolean not null,
        params jsonb not null,
        updated_at timestamptz not null,
        updated_by text
      );
      insert into monitoring_rules (rule, enabled, params, updated_at) values
        ('velocity', true, '{"count_per_hour": 20, "amount_per_hour_cents": 5000000,
          "count_per_day": 50, "amount_per_day_cents": 20000000}', '1970-01-01T00:00:00Z'),
        ('structuring', true, '{"threshold_cents": 500000, "band_pct": 90, "count": 10,
          "window_minutes": 60}', '1970-01-01T00:00:00Z'),
        ('rapid_in_out', true, '{"window_hours": 6, "min_in_cents": 1000000, "out_pct": 80}',
          '1970-01-01T00:00:00Z'),
        ('new_payee_large', true, '{"amount_cents": 2500000}', '1970-01-01T00:00:00Z'),
        ('dormant_active', true, '{"inactive_days": 180, "amount_cents": 100000}',
          '1970-01-01T00:00:00Z');
      create table monitoring_cursor (
        id smallint primary key check (id = 1),
        postings_id bigint not null
      );
      insert into monitoring_cursor (id, postings_id) values (1, 0);
      create table monitoring_evaluated (
        tx_id uuid primary key,
        evaluated_at timestamptz not null
      );
      create table monitoring_cases (
        id uuid primary key,
        seq bigint generated always as identity,
        partner_id uuid not null,
        entity_id uuid not null,
        status text not null
          check (status in ('open', 'escalated', 'report_pending', 'closed', 'reported')),
        assigned_to text,
        opened_at timestamptz not null,
        updated_at timestamptz not null,
        decision text check (decision in ('false_positive', 'escalate', 'report')),
        decision_reason text,
        decided_by text,
        decided_at timestamptz,
        approval_id uuid
      );
      create unique index monitoring_cases_one_open on monitoring_cases (entity_id)
        where status in ('open', 'escalated', 'report_pending');
      create index monitoring_cases_status on monitoring_cases (status, seq);
      create table monitoring_alerts (
        id uuid primary key,
        seq bigint generated always as identity,
        case_id uuid not null references monitoring_cases (id),
        partner_id uuid not null,
        entity_id uuid not null,
        account_id uuid not null,
        rule text not null,
        params jsonb not null,
        detail text not null,
        status text not null check (status in ('open', 'closed')),
        opened_at timestamptz not null,
        last_tx_at timestamptz not null,
        closed_at timestamptz
      );
      create index monitoring_alerts_case on monitoring_alerts (case_id);
      create index monitoring_alerts_open on monitoring_alerts (account_id, rule)
        where status = 'open';
      create index monitoring_alerts_status on monitoring_alerts (status, seq);
      create table monitoring_alert_transactions (
        alert_id uuid not null references monitoring_alerts (id),
        tx_id uuid not null,
        primary key (alert_id, tx_id)
      );
      create table monitoring_case_notes (
        id uuid primary key,
        seq bigint generated always as identity,
        case_id uuid not null references monitoring_cases (id),
        author text not null,
        author_name text not null,
        text text not null,
        created_at timestamptz not null
      );
      create index monitoring_case_notes_case on monitoring_case_notes (case_id, seq);
      create sequence monitoring_report_number;
      create table monitoring_reports (
        id uuid primary key,
        seq bigint generated always as identity,
        case_id uuid not null references monitoring_cases (id),
        partner_id uuid not null,
        reference text not null unique,
        report_code text not null check (report_code = 'STR'),
        reason text not null,
        requested_by text not null,
        approved_by text not null,
        filed_at timestamptz not null,
        xml text not null
      );
    `)
  },
}
