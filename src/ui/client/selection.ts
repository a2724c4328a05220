/** Runs ticked for comparison, in the order ticked (the first is the baseline); kept across reloads of the tab. */
const KEY = 'inferbench.compare';

export function ticked(): string[] {
  try {
    const v = JSON.parse(sessionStorage.getItem(KEY) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && /^[0-9a-f]{8}$/.test(x)) : [];
  } catch {
    return [];
  }
}

export function setTicked(id: string, on: boolean): string[] {
  const now = ticked().filter((x) => x !== id);
  if (on) now.push(id);
  sessionStorage.setItem(KEY, JSON.stringify(now));
  return now;
}

export function clearTicked(): void {
  sessionStorage.removeItem(KEY);
}
