// `npm run asyncapi`: writes docs/asyncapi.yaml (and docs/sdk-methods.md, see
// scripts/sdk-methods.ts) from the endpoint table. The test
// test/docs/asyncapi.test.ts renders the same text and fails when the checked-in file
// differs, so run this after changing any contract.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Document } from 'yaml'
import { buildAsyncApi } from '../src/contract/asyncapi.ts'
import { writeSdkMethods } from './sdk-methods.ts'

export const asyncApiPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs',
  'asyncapi.yaml')

/** The document as YAML: no anchors or aliases, no folded lines, so diffs stay readable. */
export function renderAsyncApi(): string {
  const document = new Document(buildAsyncApi(), { aliasDuplicateObjects: false })
  document.commentBefore =
    ' Generated from the endpoint table (src/contract) by `npm run asyncapi`. Do not edit by hand.'
  return document.toString({ lineWidth: 0 })
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(
  path.resolve(process.argv[1])).href
if (invokedDirectly) {
  fs.mkdirSync(path.dirname(asyncApiPath), { recursive: true })
  fs.writeFileSync(asyncApiPath, renderAsyncApi())
  process.stdout.write(`wrote ${path.relative(process.cwd(), asyncApiPath)}\n`)
  process.stdout.write(`wrote ${path.relative(process.cwd(), writeSdkMethods())}\n`)
}
