import type { MsgHdrs } from '@nats-io/transport-node'
import type { Caller } from '../auth/credential-store.ts'
import { Unauthorized } from '../errors.ts'
import { request_info_header } from './nats-claims.ts'

// Which NATS account a request came through, checked against the credential it carries.
// Every import the bank signs shares the requester's identity, so the server puts a
// `Nats-Request-Info` header on each request that crossed one, naming the calling account
// (and replacing any header of that name a client sent). A partner's token is good only
// through that partner's account, an operator's only through the operators' account, a card
// network's only through the card network's account: a token stolen from another partner,
// or an operator's or the network's token in a partner's hands, is refused like a wrong one.
// A request without the header was published inside the bank's own account, where only the
// bank's instances have users.

/** What the endpoint wrapper asks; returns a promise only when the account is not known yet. */
export interface RequestOrigin {
  check(caller: Caller, headers: MsgHdrs | undefined): Promise<void> | undefined
}

export interface AccountDirectory {
  readonly operatorsAccount: string
  /** The card network's account; undefined for an authority set up before it had one. */
  readonly cardNetworkAccount?: string | undefined
  partnerOfAccount(publicKey: string): Promise<string | undefined>
  knownPartnerOfAccount(publicKey: string): string | undefined
}

const through_wrong_account =
  'the credential does not belong to the NATS account the request came through'

export function requestOrigin(accounts: AccountDirectory): RequestOrigin {
  return {
    check(caller, headers) {
      const info = headers?.get(request_info_header)
      if (!info) return undefined
      const account = accountOf(info)
      if (caller.role === 'operator') {
        if (account !== accounts.operatorsAccount) throw new Unauthorized(through_wrong_account)
        return undefined
      }
      if (caller.role === 'card_network') {
        if (account !== accounts.cardNetworkAccount) throw new Unauthorized(through_wrong_account)
        return undefined
      }
      const known = accounts.knownPartnerOfAccount(account)
      if (known !== undefined) {
        if (known !== caller.partnerId) throw new Unauthorized(through_wrong_account)
        return undefined
      }
      return accounts.partnerOfAccount(account).then((partnerId) => {
        if (partnerId === undefined || partnerId !== caller.partnerId) throw new Unauthorized(
          through_wrong_account)
      })
    },
  }
}

/**
 * The `acc` of the header's JSON, read without parsing the whole (it also carries the
 * user's JWT, about a kilobyte, on every request). Account keys are 56 characters of base32.
 */
export function accountOf(info: string): string {
  const at = info.indexOf('"acc":"')
  if (at < 0) return ''
  const start = at + 7
  const end = info.indexOf('"', start)
  return end < 0 ? '' : info.slice(start, end)
}
