import { z } from 'zod'
import { issuedCredential } from '../auth/credential-contract.ts'
import { country, email, registrationNumber, text, timestamp } from '../contract/fields.ts'
import { operation } from '../contract/operation.ts'

// Partner onboarding, the bank's side that the incumbent's interface does not cover: operators
// create partners and list them on `ops.partner.*` with an operator credential. The bank's other
// `ops.` operations are declared beside the capability that serves each (credentials in auth/,
// reviews in kyc/ and entities/, accounts, transfers, money/); src/contract/index.ts gathers them
// into the contract's `operators` group.

export const partnerOnboardingOperations = {
  partnerCreate: operation({
    name: 'ops_partner_create',
    sdk: 'partners.create',
    subject: 'ops.partner.create',
    permission: 'operator',
    summary:
      'Onboard a partner: its root business entity (pending KYB), a first credential (read, ' +
      'write, payments; card_details is granted apart), its webhook signing secret and its NATS ' +
      'credentials file (each shown in this reply only). Refused (409) when its JetStream quotas ' +
      "would not fit the servers' storage beside the other partners'.",
    request: z.strictObject({
      name: text(),
      email: email(),
      registration_number: registrationNumber(),
      trading_name: text(),
      country: country().default('ZAF'),
    }),
    response: z.object({
      partner_id: z.string(),
      root_entity_id: z.string(),
      credential: issuedCredential,
      webhook_secret: z.string(),
      /**
       * The partner's NATS credentials file (a user of its own NATS account), shown once; null
       * when the bank runs on an open NATS server (a sandbox without `bank nats init`).
       */
      nats_creds: z.string().nullable(),
    }),
  }),
  partnerList: operation({
    name: 'ops_partner_list',
    sdk: 'partners.list',
    subject: 'ops.partner.list',
    permission: 'operator',
    summary: 'Every partner, oldest first.',
    request: z.strictObject({}),
    response: z.object({
      partners: z.array(
        z.object({ partner_id: z.string(), name: z.string(), email: z.string(),
          root_entity_id: z.string(), created_at: timestamp }),
      ),
    }),
  }),
}
