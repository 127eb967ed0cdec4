import type { Kysely, Migration } from 'kysely'
import { runStatements } from '../db/migrations.ts'

// A third kind of credential beside the partners' and the operators': a card network's
// (role `card_network`, credential-store.ts). Like an operator's it belongs to no partner;
// unlike one it acts on `net.card.` subjects only and is no person of the bank's. The
// foundation's checks (0001) knew two roles, and tied "no partner" to "operator"; they now
// tie "a partner" to "partner", which says the same of the rows already there.
export const cardNetworkCredentialsMigration: Migration = {
  async up(db: Kysely<any>) {
    await runStatements(db, `
      alter table credentials drop constraint credentials_role_check;
      alter table credentials add constraint credentials_role_check
        check (role in ('partner', 'operator', 'card_network'));
      alter table credentials drop constraint credentials_check;
      alter table credentials add constraint credentials_check
        check ((role = 'partner') = (partner_id is not null))
    `)
  },
}
