import yazl from 'yazl';

/** A zip of these entries, [name, text] (yazl), as a customer's archive would be: the Files tests' uploads. */
export function zipOf(entries: Array<[string, string]>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of entries) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
  });
}
