// Writes docs/sdk-methods.md: which SDK method and which operator command call each
// subject of the endpoint table. Run by `npm run asyncapi` (scripts/asyncapi.ts) along
// with the AsyncAPI document; test/docs/sdk-methods.test.ts fails when the checked-in
// file differs from what this renders.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { commandSpec } from '../src/cli/command-spec.ts'
import { contractEntries, type ContractEntry } from '../src/contract/index.ts'

export const sdkMethodsPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..',
  'docs', 'sdk-methods.md')

/** A table cell: no line breaks, and a `|` would end the cell. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').replaceAll('|', '\\|').trim()
}

function partnerRow(entry: ContractEntry): string {
  const op = entry.operation
  return `| \`${op.subject}\` | \`client.${entry.sdkGroup}.${entry.sdkMethod}\` | ` +
    `\`${op.permission}\` | ${cell(op.summary)} |`
}

function operatorRow(entry: ContractEntry): string {
  const op = entry.operation
  return `| \`${op.subject}\` | \`client.${entry.sdkGroup}.${entry.sdkMethod}\` | ` +
    `\`bank ${commandSpec(op).words}\` | ${cell(op.summary)} |`
}

export function renderSdkMethods(): string {
  const entries = contractEntries()
  return [
    '<!-- Generated from the endpoint table (src/contract) by `npm run asyncapi`. Do not edit by ' +
      'hand. -->',
    '',
    '# Subjects and SDK methods',
    '',
    'Every subject the bank serves and the SDK method that sends its request:',
    '`client.<group>.<method>(request)` on a `BankClient` for partner subjects, on an',
    '`OperatorClient` for `ops.` subjects, on a `CardNetworkClient` for the card network\'s',
    '`net.card.` subjects. The client fills in the `<partner_id>` or',
    '`<entity_id>` token of a subject itself. A partner credential needs the permission shown;',
    '`ops.` subjects need an operator credential, and each has a `bank` command that sends it',
    '(`bank <words> --help` shows its flags). Requests and replies are described in',
    '`docs/asyncapi.yaml`.',
    '',
    '## Partner subjects: `BankClient`',
    '',
    '| Subject | Method | Permission | Summary |',
    '|---|---|---|---|',
    ...entries.filter((entry) => entry.client === 'partner').map(partnerRow),
    '',
    '## Operator subjects: `OperatorClient` and the `bank` CLI',
    '',
    '| Subject | Method | CLI command | Summary |',
    '|---|---|---|---|',
    ...entries.filter((entry) => entry.client === 'operator').map(operatorRow),
    '',
    '## Card network subjects: `CardNetworkClient`',
    '',
    'A card network credential (`bank credential create-card-network`) may send these and',
    'nothing else; its calls write no operator audit row. The sandbox\'s `ops.sandbox.card.`',
    'subjects above take and answer the same bodies, with an operator credential.',
    '',
    '| Subject | Method | Permission | Summary |',
    '|---|---|---|---|',
    ...entries.filter((entry) => entry.client === 'card_network').map(partnerRow),
    '',
  ].join('\n')
}

export function writeSdkMethods(): string {
  fs.mkdirSync(path.dirname(sdkMethodsPath), { recursive: true })
  fs.writeFileSync(sdkMethodsPath, renderSdkMethods())
  return sdkMethodsPath
}
