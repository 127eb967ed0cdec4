import type { Module } from '../module.ts'
import { contract } from '../contract/index.ts'
import { endpoint } from '../transport/nats/endpoint.ts'

// Credentials: issue, verify, revoke. Its table came with 0001_foundation (operators).
export const authModule: Module = {
  name: 'auth',
  endpoints: (s) => [
    endpoint(contract.operators.credentialCreate, (r) => s.partners.issueCredential(r)),
    endpoint(contract.operators.credentialRevoke, (r) => s.credentials.revoke(r.credential_id)),
    endpoint(contract.operators.credentialList, async (r) => ({ credentials: await s.partners.listCredentials(r.partner_id) })),
  ],
}
