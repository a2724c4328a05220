import { describe, expect, it } from 'vitest';
import { checkWellFormedXml } from './xml-check.js';

/** The checker the gate's JUnit test relies on refuses what is not well-formed. */
describe('checkWellFormedXml', () => {
  it('reads a well-formed document, unescaping text and attributes', () => {
    const root = checkWellFormedXml('<?xml version="1.0"?>\n<a x="1 &lt; 2"><b/><c>t &amp; u</c></a>\n');
    expect(root.name).toBe('a');
    expect(root.attrs['x']).toBe('1 < 2');
    expect(root.children.map((c) => c.name)).toEqual(['b', 'c']);
    expect(root.children[1]?.text).toBe('t & u');
  });

  it.each([
    ['<a><b></a></b>', /does not close/],
    ['<a x=1/>', /not quoted/],
    ['<a>1 & 2</a>', /bare "&"/],
    ['<a x="<"/>', /"<" in attribute/],
    ['<a/><b/>', /second root/],
    ['<a>', /never closed/],
    ['<a x="1" x="2"/>', /twice/],
    ['<a>&nbsp;</a>', /unknown entity/],
  ])('refuses %s', (doc, message) => {
    expect(() => checkWellFormedXml(doc)).toThrow(message);
  });
});
