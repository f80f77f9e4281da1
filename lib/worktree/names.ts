// Worktree names: three readable words (amber-river-storm), 64 each, so 262,144
// names; a name already taken as a branch or folder is drawn again.
import { randomBytes } from '../util/random.js';

const FIRST = 'amber azure bold brave brisk calm cedar clear coral crisp dawn deep dusky eager early fair fern fleet frosty gentle gold grand green hazel ivory jade keen kind lively lunar maple merry misty noble ocean olive pale pine plain proud quiet rapid red royal ruby rustic sage sandy scarlet silent silver sleek smooth solar steady still stone sunny swift tall tidy velvet vivid wild'.split(' ');
const SECOND = 'arch bay beach bluff butte cove crest birch brook canyon cape cliff cloud coast comet creek dale delta desert dune field fjord forest glade glen grove harbor heath hill island lake lagoon marsh meadow mesa moon moor oasis orchard peak pond prairie rain reef ridge river rock shore sky slope spring star stream summit thicket tide trail tundra vale valley wave willow wind wood'.split(' ');
const THIRD = 'anchor anvil arrow badge banner compass crystal dove fox key moth beacon bell blade bloom bridge candle castle chime crown dagger drum ember falcon feather flame flute forge gate gem harp hawk helm horn jewel kite lantern lark lion lotus mast mirror nest oak otter owl pearl pillar prism quill raven sail seal shield spark spire storm sun thorn tower vine wheel wing wolf'.split(' ');

export const NAME_PATTERN = /^[a-z]+-[a-z]+-[a-z]+$/;

export function randomName(): string {
  const b = randomBytes(3);
  return [FIRST[(b[0] as number) % 64], SECOND[(b[1] as number) % 64], THIRD[(b[2] as number) % 64]].join('-');
}

export function freshName(taken: (name: string) => boolean): string {
  for (let i = 0; i < 100; i++) {
    const n = randomName();
    if (!taken(n)) return n;
  }
  throw new Error('no free worktree name after 100 draws');
}

export const WORD_LISTS = [FIRST, SECOND, THIRD];
