import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import type { ListEntry } from '../../src/screening/list-entry.ts'
import { NameIndex, type ScreeningQuery } from '../../src/screening/name-index.ts'
import { SanctionsListReader } from '../../src/screening/sanctions-list-read.ts'

// Matching names against the fixtures' entries (both lists in one index, as the bank holds
// the active versions): exact names, aliases, diacritics and other scripts, any order of
// the names, typos; what is not a hit; and how a date of birth and an ID number move a score.

const entries: ListEntry[] = []
for (const name of ['un-consolidated.xml', 'ofac-sdn.xml']) {
  const reader = new SanctionsListReader((entry) => entries.push(entry))
  reader.write(fs.readFileSync(new URL(`../fixtures/screening/${name}`, import.meta.url), 'utf8'))
  reader.end()
}
const index = new NameIndex()
for (const entry of entries) index.add(entry)

const threshold = 0.88

function hits(query: Partial<ScreeningQuery> & { name: string }, at = threshold) {
  return index.screen({ kind: 'individual', ...query }, at)
    .map((hit) => ({ ...hit, ref: entries[hit.entry]!.list_ref }))
}

function top(query: Partial<ScreeningQuery> & { name: string }) {
  const found = hits(query)
  assert.ok(found.length > 0, `${query.name} should be a hit`)
  return found[0]!
}

test('name index - an exact name is a hit with score 1, whatever its case', () => {
  const hit = top({ name: 'Ivan Petrovich Zorin' })
  assert.equal(hit.ref, 'FXi.001')
  assert.equal(hit.score, 1)
  assert.equal(top({ name: 'dmitri volkovsky' }).ref, '990001')
})

test('name index - an alias is a hit, and says which name matched', () => {
  const hit = top({ name: 'Abu Yusuf' })
  assert.equal(hit.ref, 'FXi.002')
  assert.equal(hit.matched_name, 'Abu Yusuf')
  assert.equal(top({ name: 'Helene Marchand' }).ref, '990002')
})

test('name index - diacritics and other scripts fold to the same letters', () => {
  assert.equal(top({ name: 'Jose Maria Nunez Garcia' }).ref, 'FXi.003')
  assert.equal(top({ name: 'Hélène Dubois-Marchand' }).ref, '990002')
  // Written in Cyrillic, matched against the list's Latin name or its own original script.
  assert.equal(top({ name: 'Дмитрий Волковский' }).ref, '990001')
  assert.equal(top({ name: 'Ivan Zorin' }).ref, 'FXi.001')
  assert.equal(top({ name: 'Societe Miniere du Nord', kind: 'entity' }).ref, 'FXe.002')
})

test('name index - the order of the names does not matter', () => {
  assert.equal(top({ name: 'Zorin Ivan Petrovich' }).score, 1)
  assert.equal(top({ name: 'VOLKOVSKY, Dmitri' }).score, 1)
  assert.equal(top({ name: 'Osei Kwame Mensah' }).ref, '990005')
})

test('name index - a typo, a letter too many or too few, a spelling that sounds alike, names written together', () => {
  assert.equal(top({ name: 'Dmitri Volkovski' }).ref, '990001')
  assert.equal(top({ name: 'Ivan Petrovitch Zorinn' }).ref, 'FXi.001')
  assert.equal(top({ name: 'Kwame Mensa Osei' }).ref, '990005')
  assert.equal(top({ name: 'Abdul Rahman Yusuf al Qasimi' }).ref, 'FXi.002')
  assert.equal(top({ name: 'Golden Cresent Trading', kind: 'entity' }).ref, 'FXe.001')
})

test('name index - entities: legal forms do not count, vessels are screened as entities, an individual is not matched against them', () => {
  assert.equal(top({ name: 'Northern Star Petroleum', kind: 'entity' }).score, 1)
  assert.equal(top({ name: 'Severnaya Zvezda Neft JSC', kind: 'entity' }).ref, '990003')
  assert.equal(top({ name: 'Ocean Pearl', kind: 'entity' }).ref, '990004')
  assert.deepEqual(hits({ name: 'Ocean Pearl', kind: 'individual' }), [])
  assert.deepEqual(hits({ name: 'Dmitri Volkovsky', kind: 'entity' }), [])
})

test('name index - not hits: other people, a lone surname, a name sharing one of several names', () => {
  for (const name of ['Thabo Mokoena', 'John Smith', 'Zorin', 'Ivan Petrenko',
    'Dmitri Ivanov']) {
    assert.deepEqual(hits({ name }), [], name)
  }
  assert.deepEqual(hits({ name: 'Golden Gate Bakery', kind: 'entity' }), [])
  assert.deepEqual(index.screen({ name: '  ...  ', kind: 'individual' }, 0), [])
})

test('name index - a date of birth raises the score when it matches (the day, or the year the list gives) and lowers it when none fits', () => {
  const plain = top({ name: 'Ivan Zorin' })
  const sameDay = top({ name: 'Ivan Zorin', dateOfBirth: '1961-04-12' })
  assert.equal(sameDay.date_of_birth, 'match')
  assert.ok(sameDay.score > plain.score || sameDay.score === 1)
  const otherDay = hits({ name: 'Ivan Petrovich Zorin', dateOfBirth: '1990-01-01' }, 0)[0]!
  assert.equal(otherDay.date_of_birth, 'mismatch')
  assert.equal(otherDay.score, 0.85)
  assert.deepEqual(hits({ name: 'Ivan Petrovich Zorin', dateOfBirth: '1990-01-01' }), [],
    'a different date of birth takes an exact name under the threshold')
  // Two of a listed name's four names are a hit (lists give more names than customers)...
  assert.equal(top({ name: 'Maria Garcia' }).ref, 'FXi.003')
  // ...which a date of birth outside the list's years takes away.
  assert.deepEqual(hits({ name: 'Maria Garcia', dateOfBirth: '1990-01-01' }), [])
  const inRange = hits({ name: 'Jose Maria Nunez', dateOfBirth: '1969-06-30' }, 0)[0]!
  assert.equal(inRange.date_of_birth, 'year_match')
  assert.ok(inRange.score > inRange.name_score)
  assert.equal(hits({ name: 'Ocean Pearl', kind: 'entity', dateOfBirth: '1969-06-30' })[0]!
    .date_of_birth, 'not_compared')
})

test('name index - an ID number the list gives raises the score, written with or without its separators; another is no match and changes nothing', () => {
  const near = hits({ name: 'Abdul Qasimi' }, 0).find((h) => h.ref === 'FXi.002')!
  const withId = hits({ name: 'Abdul Qasimi', idNumber: '784 1975 1234567 1' }, 0)
    .find((h) => h.ref === 'FXi.002')!
  assert.equal(withId.id_number, 'match')
  assert.equal(withId.score, Math.min(1, Math.round((near.score + 0.15) * 1000) / 1000))
  const other = hits({ name: 'Abdul Qasimi', idNumber: 'X999' }, 0)
    .find((h) => h.ref === 'FXi.002')!
  assert.equal(other.id_number, 'no_match')
  assert.equal(other.score, near.score)
  // A name unlike any on the list is still found by its document number, with its own score.
  const byDocument = hits({ name: 'Peter Jones', idNumber: 'P77310042' }, 0)
  assert.equal(byDocument[0]!.ref, 'FXi.001')
  assert.equal(byDocument[0]!.id_number, 'match')
  assert.ok(byDocument[0]!.score < threshold)
})
