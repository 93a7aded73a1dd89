/**
 * Small shipped stop-word lists. English: the function words of the classic
 * SMART/NLTK lists that carry no topic (articles, pronouns, auxiliaries,
 * prepositions, conjunctions, common contractions), 156 words. Chinese: the most frequent function
 * words and particles of the jieba/HIT stop lists, 83 words. Kept short on
 * purpose: removing them makes shingles of content words, while a long list
 * would start eating content on short pages.
 *
 * Changing a list changes fingerprints (the golden vectors will say so).
 */
export const ENGLISH_STOP_WORDS: readonly string[] = (
  'a about above after again against all also am an and any are as at be because been before being below ' +
  'between both but by can could did do does doing done down during each either else ever every few for from ' +
  'further had has have having he her here hers herself him himself his how however i if in into is it its ' +
  'itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over ' +
  'own same she should so some such than that the their theirs them themselves then there these they this ' +
  'those through to too under until up upon us very was we were what when where whether which while who whom ' +
  'whose why will with within without would yet you your yours yourself yourselves s t don\'t doesn\'t didn\'t ' +
  'isn\'t aren\'t wasn\'t weren\'t can\'t won\'t it\'s i\'m you\'re we\'re they\'re'
).split(' ');

export const CHINESE_STOP_WORDS: readonly string[] = (
  '的 了 是 在 和 有 就 不 也 都 而 及 与 或 着 或者 一个 没有 我们 你们 他们 她们 它们 我 你 他 她 它 这 那 ' +
  '这个 那个 这些 那些 之 其 以 于 为 被 把 从 对 向 由 因为 所以 但是 但 如果 虽然 然而 并且 而且 可以 ' +
  '会 能 要 将 已 已经 还 又 再 很 更 最 吗 呢 吧 啊 呀 哦 嗯 么 个 等 等等 此 该 各 每 啦'
).split(' ');

/**
 * Words that name a date or time rather than a topic: the tokenizer maps them
 * to the NUM token with the numbers around them, so "Updated Monday 5 May"
 * and "Updated Tuesday 6 May" give the same tokens. Ambiguous three-letter
 * forms that are common words (sun, sat, wed, mar, may as a verb is a stop
 * word anyway) are left out; "may" is included as a month because it is also
 * a stop word, so either way it never becomes a content feature.
 */
export const DATE_WORDS: readonly string[] = (
  'january february march april may june july august september october november december ' +
  'jan feb apr jun jul aug sep sept oct nov dec ' +
  'monday tuesday wednesday thursday friday saturday sunday mon tue tues thu thur thurs fri ' +
  'utc gmt ' +
  '星期一 星期二 星期三 星期四 星期五 星期六 星期日 星期天 周一 周二 周三 周四 周五 周六 周日 上午 下午 今天 昨天'
).split(' ');

/**
 * Words that introduce a date, a time or a counter in page metadata ("Last updated 2024-05-06",
 * "Posted on May 6", "Mis à jour le ...", "更新于 ..."): directly before a NUM they belong to it
 * (tokenizer.ts), so a metadata line added to a page adds no word of its own. Function words are
 * here only for the phrases they complete ("on", "le", "am" before a date).
 */
export const DATE_CUE_WORDS: readonly string[] = [
  'last updated modified posted published edited created revised changed released on at',
  'mis à jour le publié modifié créé',
  'zuletzt aktualisiert geändert veröffentlicht erstellt am',
  'última actualización actualizado publicado modificado creado el',
  'aggiornato pubblicato modificato creato il',
  'atualizado criado em',
  'bijgewerkt gepubliceerd op',
  'zaktualizowano opublikowano',
  'обновлено опубликовано изменено создано',
  '更新 更新于 发布 发布于 发表于 于 最后 最后更新 投稿 公開 更新日',
  '최종 수정일 수정 업데이트 게시 게시일 작성 작성일 생성 조회 조회수 댓글',
]
  .join(' ')
  .split(' ');

/** Han characters that, directly after a digit, are part of a date or time (2024年5月6日 10点30分). */
export const CJK_DATE_SUFFIXES = '年月日号时点分秒';
