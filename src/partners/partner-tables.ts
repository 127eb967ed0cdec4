import type { ColumnType, Generated } from 'kysely'
import type { Timestamp } from '../db/column-types.ts'

// Kysely types of the table the operators' capability owns: partners, which operators create
// and suspend (src/schema.ts's Database extends PartnerTables).

export interface PartnersTable {
  id: string
  created_seq: Generated<string>
  name: string
  email: string
  root_entity_id: string
  created_at: Timestamp
  /** Set while the partner is suspended: its tokens are refused and its NATS users cut off. */
  suspended_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
}

export interface PartnerTables {
  partners: PartnersTable
}
