import assert from 'node:assert/strict'
import { SaxesParser } from 'saxes'

// A small tree of a message's elements for tests to look into, read with saxes (not with the
// bank's own readers, whose output the tests check).

export interface XmlElement {
  name: string
  uri: string
  attributes: Record<string, string>
  text: string
  children: XmlElement[]
}

/** The document element of `xml`, with every element below it. */
export function parseXml(xml: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true })
  const top: XmlElement = { name: '', uri: '', attributes: {}, text: '', children: [] }
  const open = [top]
  parser.on('opentag', (tag) => {
    const attributes = Object.fromEntries(Object.values(tag.attributes)
      .map((a) => [a.local, a.value]))
    const element = { name: tag.local, uri: tag.uri, attributes, text: '', children: [] }
    open.at(-1)!.children.push(element)
    open.push(element)
  })
  parser.on('text', (text) => {
    open.at(-1)!.text += text
  })
  parser.on('closetag', () => {
    open.pop()
  })
  parser.write(xml).close()
  assert.equal(top.children.length, 1)
  return top.children[0]!
}

/** The element at a path of child names (`GrpHdr/MsgId`); fails unless there is one. */
export function at(element: XmlElement, elementPath: string): XmlElement {
  let here = element
  for (const name of elementPath.split('/')) {
    const found = here.children.filter((child) => child.name === name)
    assert.equal(found.length, 1, `one ${name} under ${here.name} (${elementPath})`)
    here = found[0]!
  }
  return here
}

export const textAt = (element: XmlElement, elementPath: string) => at(element, elementPath).text

/** The children of `element` named `name`. */
export const all = (element: XmlElement, name: string) =>
  element.children.filter((child) => child.name === name)

/** Cents as a message writes them: `1234` → `12.34`. */
export const rands = (cents: number) => (cents / 100).toFixed(2)
