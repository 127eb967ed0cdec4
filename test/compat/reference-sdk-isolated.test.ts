import { before } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { referenceSdkCardFlows } from './card-flows.ts'
import { referenceSdkDocumentFlows } from './document-flows.ts'
import { prepareFlows, referenceSdkFlows, type FlowContext } from './flows.ts'
import { emulatedJackson } from './reference-sdk.ts'

// Every flow of the reference SDK, run as the compatibility suite runs it, on NATS set up
// for production (docs/operations.md, "Partners on NATS"): the bank is the NATS authority,
// the server runs the configuration `bank nats init` wrote, over TLS, and the partner
// connects with only what the bank issued it, the creds file and the token. The documents
// go into dropboxes in the partner's own account, where the bank reads them.

const tb = useTestBank({ natsAuthority: true })
let c: FlowContext

before(async () => {
  await tb.ready
  c = await prepareFlows(tb, emulatedJackson)
})

referenceSdkFlows('own NATS account, TLS', () => c)
referenceSdkDocumentFlows('own NATS account, TLS', () => c)
referenceSdkCardFlows('own NATS account, TLS', () => c)
