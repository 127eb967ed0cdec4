import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { useTestBank } from '../support/harness.ts'
import { referenceSdkCardFlows } from './card-flows.ts'
import { referenceSdkDocumentFlows } from './document-flows.ts'
import { prepareFlows, referenceSdkFlows, type FlowContext } from './flows.ts'
import { jacksonWrite, replyProblems, type Inclusion, type RecordValues } from './jackson.ts'
import { JacksonBridge, javaAvailability, javaRequired } from './java-bridge.ts'
import { realJackson } from './reference-sdk.ts'
import { isRecordType, listElement, mapValue, sdkRecords, type RecordName, type SdkRecord } from './sdk-records.ts'

// The reference SDK's flows with real Jackson writing every request and reading every reply
// (java/JacksonBridge.java, records with the SDK's components, default ObjectMapper, NON_NULL
// for the entity records as the SDK's EntityService has it). First it checks that the bridge's
// records are the list's and that our emulation (jackson.ts) writes and judges exactly as
// Jackson does, so that the emulated file stands for Jackson where Java is missing.
//
// Without a JDK and Debian's libjackson2-databind-java this part cannot run: in CI (CI=true)
// or with BANK_TEST_REQUIRE_JAVA=1 that is a failure; elsewhere one passing test says so.

const java = javaAvailability()

if (!java.available) {
  test('reference SDK (Jackson) - real Jackson checks', (t) => {
    const message = `not run: ${java.reason}`
    if (javaRequired) assert.fail(`${message}; CI=true or BANK_TEST_REQUIRE_JAVA=1 requires them`)
    t.diagnostic(message)
  })
} else {
  const tb = useTestBank()
  let bridge: JacksonBridge
  let c: FlowContext

  before(async () => {
    await tb.ready
    bridge = JacksonBridge.start(java.classpath)
    c = await prepareFlows(tb, realJackson(bridge))
  })

  after(async () => {
    await bridge?.stop()
  })

  const name = (behaviour: string) => `reference SDK (Jackson) - ${behaviour}`

  test(name("the bridge's records have the list's names, components and Java types"), async () => {
    const bridged = await bridge.records()
    assert.deepEqual(
      bridged.map((r) => ({ name: r.name, components: r.components })),
      sdkRecords.map(
        (r) => ({ name: r.name, components: r.components.map(([n, type]) => [n, type]) })),
    )
  })

  test(name('our emulation writes the bytes Jackson writes, for every request record and inclusion'), async () => {
    const writable = sdkRecords.filter((r) => r.components.every(([, type]) => isWritable(type)))
    for (const name of ['CreateEntityRequest', 'TransferEFTRTCRequest', 'SubmitDocumentsRequest',
        'UpdateDirectorRequest']) {
      assert.ok(writable.some((r) => r.name === name), `${name} is checked`)
    }
    for (const record of writable) {
      for (const inclusion of ['sdk', 'always',
          'non_null'] as const satisfies readonly Inclusion[]) {
        for (const values of [sampleValues(record, 'write'), {}, halfNull(record)]) {
          const name = record.name as RecordName
          assert.equal(jacksonWrite(name, values, inclusion), await bridge.write(name, values,
            inclusion), `${record.name} ${inclusion} ${JSON.stringify(values)}`)
        }
      }
    }
  })

  test(name('our reply check and Jackson agree: a full reply reads, an unknown key (nested too) or a wrong shape does not'), async () => {
    for (const record of sdkRecords) {
      const name = record.name as RecordName
      const full = JSON.stringify(sampleValues(record, 'read'))
      assert.deepEqual(replyProblems(name, JSON.parse(full)), [],
        `${name}: emulation reads ${full}`)
      assert.equal(await bridge.read(name, full), undefined, `${name}: Jackson reads ${full}`)

      for (const bad of badReplies(record)) {
        assert.notDeepEqual(replyProblems(name, JSON.parse(bad)), [],
          `${name}: emulation refuses ${bad}`)
        assert.ok(await bridge.read(name, bad), `${name}: Jackson refuses ${bad}`)
      }
    }
  })

  referenceSdkFlows('Jackson', () => c)
  referenceSdkDocumentFlows('Jackson', () => c)
  referenceSdkCardFlows('Jackson', () => c)
}

/** Whether our emulation writes the type: every type but `Metadata`, which no request has. */
function isWritable(type: string): boolean {
  const inner = listElement(type) ?? mapValue(type)
  if (inner !== undefined) return isWritable(inner)
  if (isRecordType(type)) return recordNamed(type).components.every(([, component]) => isWritable(
    component))
  return type === 'String' || type === 'int' || type === 'boolean' || type === 'Object'
}

/**
 * A value for every component: strings named after their component, 7 for an int, true for
 * a boolean, nested records filled likewise; lists of one item, metadata of one string, maps
 * of one entry, an `Object` a small nested JSON object.
 */
function sampleValues(record: SdkRecord, purpose: 'write' | 'read'): RecordValues {
  return Object.fromEntries(
    record.components.map(([component, type]) => [component, sampleOf(component, type, purpose)]))
}

function sampleOf(component: string, type: string, purpose: 'write' | 'read'): unknown {
  if (type === 'String') return `${component} é "1"`
  if (type === 'int') return 7
  if (type === 'boolean') return true
  if (type === 'Metadata') return { source: 'compat' }
  if (type === 'Object') return { tier: 'gold', employees: 12, listed: false, codes: ['a', 1],
    about: { since: 2020 } }
  const element = listElement(type)
  if (element !== undefined) return [sampleOf(component, element, purpose)]
  const mapped = mapValue(type)
  if (mapped !== undefined) return { [`${component}_key`]: sampleOf(component, mapped, purpose) }
  return sampleValues(recordNamed(type), purpose)
}

/** Every other component null (or left at 0 / false), nested records too. */
function halfNull(record: SdkRecord): RecordValues {
  const sample = sampleValues(record, 'write')
  return Object.fromEntries(Object.entries(sample).filter((_, index) => index % 2 === 0))
}

/**
 * Replies a default ObjectMapper refuses: an unknown key at the top and in each nested record, an
 * array for the record.
 */
function badReplies(record: SdkRecord): string[] {
  const full = sampleValues(record, 'read')
  const bad = [{ ...full, unexpected_key: 'x' }, ...record.components.flatMap(
    ([component, type]) => nestedUnknown(full, component, type))]
  return [...bad.map((b) => JSON.stringify(b)), '[]']
}

function nestedUnknown(full: RecordValues, component: string, type: string): RecordValues[] {
  const element = listElement(type)
  if (element !== undefined && isRecordType(element)) {
    const [item] = full[component] as RecordValues[]
    return [{ ...full, [component]: [{ ...item, unexpected_key: 'x' }] }]
  }
  if (element !== undefined) return [{ ...full, [component]: { not: 'a list' } }]
  const mapped = mapValue(type)
  if (mapped !== undefined && listElement(mapped) !== undefined) return [
    { ...full, [component]: { key: 'not a list' } }]
  if (mapped !== undefined) return [{ ...full, [component]: 'not a map' }]
  if (isRecordType(type)) return [{ ...full, [component]: { ...(full[component] as RecordValues),
    unexpected_key: 'x' } }]
  if (type === 'String') return [{ ...full, [component]: { not: 'a string' } }]
  if (type === 'Metadata') return [{ ...full, [component]: { nested: { not: 'a string' } } }]
  return []
}

function recordNamed(name: string): SdkRecord {
  const record = sdkRecords.find((r) => r.name === name)
  if (!record) throw new Error(`no record ${name}`)
  return record
}
