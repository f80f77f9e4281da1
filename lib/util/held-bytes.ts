// Bytes held in order until a whole message is in, copied into blocks of
// their own: a body of one-byte pieces kept as the pieces cost an object of
// about a hundred bytes a byte (review, round 38: an MCP answer in one-byte
// chunks held 108 bytes of heap a byte, past what its room counts).

/** The size of a block pieces are copied into. */
const BLOCK = 16 << 10;

export class HeldBytes {
  private blocks: Buffer[] = [];
  private block: Buffer | null = null;
  private used = 0;
  private bytes = 0;

  push(b: Buffer): void {
    let at = 0;
    while (at < b.length) {
      if (this.block === null || this.used === this.block.length) {
        // Sized by what comes, doubling up to a block (review, round 38, second pass: a block for a one-byte piece
        // cost 16 KiB a stream); a large piece gets a block of its size, to 1 MiB.
        const want = b.length - at;
        const size = want >= BLOCK ? Math.min(want, 1 << 20) : Math.min(BLOCK, Math.max(64, 2 * want, 2 * (this.block?.length ?? 0)));
        if (this.block !== null) this.blocks.push(this.block);
        this.block = Buffer.allocUnsafeSlow(size);
        this.used = 0;
      }
      const n = b.copy(this.block, this.used, at);
      this.used += n;
      at += n;
    }
    this.bytes += b.length;
  }

  /** Everything held, in one buffer; nothing is held after. */
  take(): Buffer {
    const last = this.block === null ? [] : [this.block.subarray(0, this.used)];
    // One block: itself where it is mostly used, else a copy (the rest of the block is not kept alive with it).
    const one = this.blocks.length === 0 && this.block !== null ? this.block : null;
    const all = one !== null ? (this.used * 2 >= one.length ? one.subarray(0, this.used) : Buffer.from(one.subarray(0, this.used))) : Buffer.concat([...this.blocks, ...last]);
    this.clear();
    return all;
  }

  clear(): void {
    this.blocks = [];
    this.block = null;
    this.used = 0;
    this.bytes = 0;
  }

  get size(): number {
    return this.bytes;
  }
}
