/**
 * Chinese word segmentation with @node-rs/jieba (jieba-rs through N-API, the
 * prebuilt binary ships inside the npm package) and the dictionary it ships
 * (`@node-rs/jieba/dict.js`, 349k words). One instance per process (loading
 * the dictionary takes ~0.35 s and ~100 MB), created on first use.
 *
 * The tokenizer hands over all Han runs of a page joined by '\n' in one call
 * (one N-API crossing per page); jieba returns '\n' as a token of its own, so
 * the words map back to their runs in order. HMM is on (jieba's default): it
 * joins unknown names and new words instead of leaving single characters.
 */
export interface CjkSegmenter {
  /** Segments text made of Han runs separated by '\n'; '\n' comes back as its own token. */
  cut(runs: string): string[];
}

let shared: Promise<CjkSegmenter> | undefined;

export function loadJiebaSegmenter(): Promise<CjkSegmenter> {
  shared ??= (async () => {
    const [{ Jieba }, { dict }] = await Promise.all([import('@node-rs/jieba'), import('@node-rs/jieba/dict.js')]);
    const jieba = Jieba.withDict(dict);
    return { cut: (runs: string) => jieba.cut(runs, true) };
  })();
  return shared;
}

/** The IDF table jieba ships (`word idf` per line), for TF-IDF weighting. */
export async function loadJiebaIdfText(): Promise<string> {
  const { idf } = await import('@node-rs/jieba/dict.js');
  return new TextDecoder('utf-8').decode(idf);
}
