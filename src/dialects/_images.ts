/**
 * Request bodies with images, serialised without scanning the images: JSON.stringify looks at every character of a
 * string for escapes (~1 GB/s), so a 4 MB image would cost milliseconds at every send. Each image goes in as a short
 * placeholder that needs no escaping, and its text (base64: never escaped either) is spliced into the JSON after.
 */

/** Unlikely in any prompt; JSON.stringify copies it as it is. */
const MARK = 'inferbench-image-placeholder-';

/** Placeholders for `images`, in order, to put where the images go before JSON.stringify. */
export function imagePlaceholders(images: readonly string[]): string[] {
  return images.map((_, k) => `${MARK}${k}`);
}

/**
 * The JSON `body` with each placeholder replaced by its image (`images[k]` for placeholder k), in one pass, and the
 * result's UTF-8 length: the images are ASCII (base64), so only the JSON around them is counted.
 */
export function spliceImages(body: string, images: readonly string[]): { body: string; contentLength: number } {
  let out = '';
  let from = 0;
  let bytes = Buffer.byteLength(body);
  for (let k = 0; k < images.length; k++) {
    const mark = `${MARK}${k}`;
    const at = body.indexOf(mark, from);
    if (at < 0) continue;
    const image = images[k] as string;
    out += body.slice(from, at) + image;
    bytes += image.length - mark.length;
    from = at + mark.length;
  }
  return { body: out + body.slice(from), contentLength: bytes };
}
