/**
 * A strict well-formedness check of an XML document (no XML parser is among the dependencies): an optional
 * `<?xml …?>` declaration, one root element, matched and properly nested tags, attributes quoted and unique per
 * element, `&` only in the five predefined entities or character references, no `<` in text or attribute values.
 * Throws on the first violation; returns the element tree (text unescaped) so tests can read it.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*/;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescape(raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`"<" in ${where}`);
  return raw.replace(/&([^;]*);?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) throw new Error(`bare "&" in ${where}`);
    if (ENTITIES[ref] !== undefined) return ENTITIES[ref];
    const m = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(ref);
    if (!m) throw new Error(`unknown entity &${ref}; in ${where}`);
    const code = (m[1] as string).startsWith('x') ? parseInt((m[1] as string).slice(1), 16) : parseInt(m[1] as string, 10);
    return String.fromCodePoint(code);
  });
}

export function checkWellFormedXml(doc: string): XmlElement {
  let i = 0;
  const skipSpace = (): void => {
    while (i < doc.length && /\s/.test(doc[i] as string)) i++;
  };
  if (doc.startsWith('<?xml')) {
    const end = doc.indexOf('?>');
    if (end < 0) throw new Error('unterminated XML declaration');
    i = end + 2;
  }
  skipSpace();
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (i < doc.length) {
    if (doc.startsWith('<!--', i)) {
      const end = doc.indexOf('-->', i);
      if (end < 0) throw new Error('unterminated comment');
      i = end + 3;
      continue;
    }
    if (doc[i] === '<' && doc[i + 1] === '/') {
      const m = NAME.exec(doc.slice(i + 2));
      const name = m?.[0] ?? '';
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`end tag </${name}> does not close <${open?.name ?? '(none)'}> at ${i}`);
      i += 2 + name.length;
      skipSpace();
      if (doc[i] !== '>') throw new Error(`malformed end tag </${name}> at ${i}`);
      i++;
      continue;
    }
    if (doc[i] === '<') {
      if (root && stack.length === 0) throw new Error(`second root element at ${i}`);
      const m = NAME.exec(doc.slice(i + 1));
      if (!m) throw new Error(`bad tag name at ${i}`);
      const el: XmlElement = { name: m[0], attrs: {}, children: [], text: '' };
      i += 1 + m[0].length;
      for (;;) {
        const before = i;
        skipSpace();
        if (doc.startsWith('/>', i) || doc[i] === '>') break;
        if (i === before) throw new Error(`no space before an attribute of <${el.name}> at ${i}`);
        const a = NAME.exec(doc.slice(i));
        if (!a) throw new Error(`bad attribute in <${el.name}> at ${i}`);
        i += a[0].length;
        if (doc[i] !== '=') throw new Error(`attribute ${a[0]} of <${el.name}> has no value`);
        const quote = doc[i + 1];
        if (quote !== '"' && quote !== "'") throw new Error(`attribute ${a[0]} of <${el.name}> is not quoted`);
        const end = doc.indexOf(quote, i + 2);
        if (end < 0) throw new Error(`unterminated attribute ${a[0]}`);
        if (el.attrs[a[0]] !== undefined) throw new Error(`attribute ${a[0]} twice on <${el.name}>`);
        el.attrs[a[0]] = unescape(doc.slice(i + 2, end), `attribute ${a[0]} of <${el.name}>`);
        i = end + 1;
      }
      stack[stack.length - 1]?.children.push(el);
      if (!root) root = el;
      if (doc.startsWith('/>', i)) i += 2;
      else {
        i++;
        stack.push(el);
      }
      continue;
    }
    const next = doc.indexOf('<', i);
    const raw = doc.slice(i, next < 0 ? doc.length : next);
    const top = stack[stack.length - 1];
    if (!top) {
      if (raw.trim() !== '') throw new Error(`text outside the root element at ${i}`);
    } else top.text += unescape(raw, `text of <${top.name}>`);
    i = next < 0 ? doc.length : next;
  }
  if (stack.length > 0) throw new Error(`<${stack[stack.length - 1]?.name}> is never closed`);
  if (!root) throw new Error('no root element');
  return root;
}
