/**
 * Words of the page chrome crawlers meet around real content (ads, banners,
 * counters, widgets), per language. Ads are made up from brand, product and
 * offer lists so two crawls of one page can show different creatives.
 */

export interface ChromeWords {
  readonly ad: string;
  readonly sponsored: string;
  readonly brands: readonly string[];
  readonly products: readonly string[];
  readonly offers: readonly string[];
  readonly ctas: readonly string[];
  readonly banners: readonly string[];
  readonly views: (n: string) => string;
  readonly updated: (date: string) => string;
  readonly crawled: (when: string) => string;
  readonly comments: (n: string) => string;
  readonly widgetTitles: Readonly<Record<'recent' | 'popular' | 'related' | 'tags' | 'newsletter' | 'social', string>>;
  readonly newsletter: readonly string[];
  readonly subscribe: string;
  readonly tags: readonly string[];
}

const EN: ChromeWords = {
  ad: 'Advertisement',
  sponsored: 'Sponsored',
  brands: ['CloudNimbus', 'ByteHarbor', 'Stackwise', 'HostPilot', 'DataLoom', 'Quillworks', 'Trailforge', 'Northwind Cloud', 'Kestrel VPN', 'Lumen Desk'],
  products: ['managed PostgreSQL', 'VPS hosting', 'CI build minutes', 'a password manager', 'the online course "Python in 30 days"', 'noise-cancelling headphones', 'a standing desk', 'object storage', 'a VPN for developers', 'mechanical keyboards'],
  offers: ['30% off this week', 'first month free', 'from $4.99/month', 'free shipping over $50', 'save up to 60% today', '2 months free on annual plans'],
  ctas: ['Learn more', 'Shop now', 'Start free trial', 'Sign up today', 'Get the deal'],
  banners: ['Our new documentation search is live. Try it now!', 'We use cookies to improve your experience. By browsing you accept our cookie policy.', 'Scheduled maintenance on Saturday 02:00-04:00 UTC.', 'Join us at DevConf this autumn: early-bird tickets on sale.'],
  views: (n) => `${n} views`,
  updated: (d) => `Last updated ${d}`,
  crawled: (w) => `Page generated ${w}`,
  comments: (n) => `${n} comments`,
  widgetTitles: { recent: 'Recent posts', popular: 'Most popular', related: 'Related articles', tags: 'Tags', newsletter: 'Newsletter', social: 'Follow us' },
  newsletter: ['Get the best articles in your inbox every week.', 'No spam. Unsubscribe at any time.'],
  subscribe: 'Subscribe',
  tags: ['linux', 'database', 'tutorial', 'security', 'networking', 'python', 'performance', 'devops', 'beginners', 'configuration', 'cloud', 'shell'],
};

const ZH_CN: ChromeWords = {
  ad: '广告',
  sponsored: '推广',
  brands: ['云帆', '数港', '快栈', '智联云', '易学堂', '青木科技', '北辰网络', '光年主机'],
  products: ['云服务器', '数据库托管服务', '在线课程：30天学会Python', '降噪耳机', '人体工学椅', '对象存储', '企业邮箱', '机械键盘'],
  offers: ['限时特惠低至1折', '首月免费', '新用户立减100元', '全场包邮', '年付再送两个月'],
  ctas: ['立即购买', '了解详情', '免费试用', '马上抢购'],
  banners: ['文档站点全新搜索功能上线，欢迎试用！', '本站使用 Cookie 改善浏览体验，继续浏览即表示同意。', '本周六凌晨两点至四点系统维护。'],
  views: (n) => `阅读 ${n} 次`,
  updated: (d) => `最后更新于 ${d}`,
  crawled: (w) => `本页生成于 ${w}`,
  comments: (n) => `${n} 条评论`,
  widgetTitles: { recent: '最新文章', popular: '热门文章', related: '相关阅读', tags: '标签云', newsletter: '订阅通讯', social: '关注我们' },
  newsletter: ['每周精选文章发送到您的邮箱。', '不发垃圾邮件，随时退订。'],
  subscribe: '订阅',
  tags: ['Linux', '数据库', '教程', '安全', '网络', '性能优化', '运维', '入门', '配置', '云计算'],
};

const ZH_TW: ChromeWords = {
  ...ZH_CN,
  ad: '廣告',
  brands: ['雲帆', '數港', '快棧', '智聯雲', '易學堂', '青木科技'],
  products: ['雲端伺服器', '資料庫代管服務', '線上課程：30天學會Python', '降噪耳機', '人體工學椅', '物件儲存'],
  offers: ['限時特價低至1折', '首月免費', '新用戶立減100元', '全館免運'],
  ctas: ['立即購買', '了解詳情', '免費試用'],
  banners: ['文件網站全新搜尋功能上線，歡迎試用！', '本站使用 Cookie 改善瀏覽體驗。'],
  views: (n) => `閱讀 ${n} 次`,
  updated: (d) => `最後更新於 ${d}`,
  crawled: (w) => `本頁產生於 ${w}`,
  comments: (n) => `${n} 則留言`,
  widgetTitles: { recent: '最新文章', popular: '熱門文章', related: '相關閱讀', tags: '標籤雲', newsletter: '訂閱電子報', social: '關注我們' },
  newsletter: ['每週精選文章寄到您的信箱。', '不寄垃圾郵件，隨時取消訂閱。'],
  subscribe: '訂閱',
  tags: ['Linux', '資料庫', '教學', '安全', '網路', '效能', '維運', '入門', '設定'],
};

const JA: ChromeWords = {
  ...EN,
  ad: '広告',
  sponsored: 'PR',
  brands: ['クラウドニンバス', 'バイトハーバー', 'スタックワイズ', 'ホストパイロット', 'データルーム'],
  products: ['クラウドサーバー', 'マネージドデータベース', 'オンライン講座「30日でPython」', 'ワイヤレスイヤホン', 'スタンディングデスク'],
  offers: ['初月無料', '今だけ30%オフ', '月額480円から', '送料無料'],
  ctas: ['詳しくはこちら', '今すぐ購入', '無料で試す'],
  banners: ['ドキュメント検索をリニューアルしました。', '当サイトはクッキーを使用しています。', '土曜日 2:00〜4:00 にメンテナンスを行います。'],
  views: (n) => `${n} 回閲覧`,
  updated: (d) => `最終更新日 ${d}`,
  crawled: (w) => `ページ生成 ${w}`,
  comments: (n) => `コメント ${n} 件`,
  widgetTitles: { recent: '最近の投稿', popular: '人気の記事', related: '関連記事', tags: 'タグ', newsletter: 'ニュースレター', social: 'フォローする' },
  newsletter: ['毎週おすすめの記事をお届けします。', 'いつでも配信停止できます。'],
  subscribe: '登録',
  tags: ['Linux', 'データベース', 'チュートリアル', 'セキュリティ', 'ネットワーク', '設定'],
};

const DE: ChromeWords = {
  ...EN,
  ad: 'Anzeige',
  sponsored: 'Gesponsert',
  products: ['verwaltetes PostgreSQL', 'VPS-Hosting', 'einen Passwort-Manager', 'den Onlinekurs „Python in 30 Tagen“', 'Kopfhörer mit Geräuschunterdrückung', 'einen Stehschreibtisch'],
  offers: ['diese Woche 30 % günstiger', 'erster Monat gratis', 'ab 4,99 € im Monat', 'versandkostenfrei ab 50 €'],
  ctas: ['Mehr erfahren', 'Jetzt kaufen', 'Kostenlos testen'],
  banners: ['Unsere neue Dokumentationssuche ist online.', 'Diese Website verwendet Cookies.', 'Wartungsarbeiten am Samstag von 2 bis 4 Uhr.'],
  views: (n) => `${n} Aufrufe`,
  updated: (d) => `Zuletzt aktualisiert am ${d}`,
  crawled: (w) => `Seite erzeugt ${w}`,
  comments: (n) => `${n} Kommentare`,
  widgetTitles: { recent: 'Neueste Beiträge', popular: 'Beliebt', related: 'Ähnliche Artikel', tags: 'Schlagwörter', newsletter: 'Newsletter', social: 'Folgen Sie uns' },
  newsletter: ['Die besten Artikel jede Woche in Ihrem Postfach.', 'Kein Spam, jederzeit abbestellbar.'],
  subscribe: 'Abonnieren',
  tags: ['Linux', 'Datenbank', 'Anleitung', 'Sicherheit', 'Netzwerk', 'Konfiguration'],
};

const FR: ChromeWords = {
  ...EN,
  ad: 'Publicité',
  sponsored: 'Sponsorisé',
  products: ['PostgreSQL géré', "l'hébergement VPS", 'un gestionnaire de mots de passe', 'le cours en ligne « Python en 30 jours »', 'un casque à réduction de bruit', 'un bureau assis-debout'],
  offers: ['30 % de réduction cette semaine', 'premier mois offert', 'à partir de 4,99 € par mois', 'livraison gratuite dès 50 €'],
  ctas: ['En savoir plus', 'Acheter', 'Essai gratuit'],
  banners: ['Notre nouvelle recherche dans la documentation est en ligne.', 'Ce site utilise des cookies.', 'Maintenance prévue samedi de 2 h à 4 h.'],
  views: (n) => `${n} vues`,
  updated: (d) => `Mis à jour le ${d}`,
  crawled: (w) => `Page générée ${w}`,
  comments: (n) => `${n} commentaires`,
  widgetTitles: { recent: 'Articles récents', popular: 'Les plus lus', related: 'Articles liés', tags: 'Étiquettes', newsletter: 'Lettre d’information', social: 'Suivez-nous' },
  newsletter: ['Les meilleurs articles chaque semaine dans votre boîte.', 'Pas de spam, désinscription à tout moment.'],
  subscribe: "S'abonner",
  tags: ['linux', 'base de données', 'tutoriel', 'sécurité', 'réseau', 'configuration'],
};

// The languages below are read only by the held-out stream (heldout-sources.ts).

const ES: ChromeWords = {
  ...EN,
  ad: 'Publicidad',
  sponsored: 'Patrocinado',
  products: ['PostgreSQL gestionado', 'alojamiento VPS', 'un gestor de contraseñas', 'el curso en línea «Python en 30 días»', 'auriculares con cancelación de ruido', 'un escritorio elevable'],
  offers: ['30 % de descuento esta semana', 'primer mes gratis', 'desde 4,99 € al mes', 'envío gratis a partir de 50 €'],
  ctas: ['Más información', 'Comprar ahora', 'Prueba gratis'],
  banners: ['Ya está disponible la nueva búsqueda en la documentación.', 'Este sitio utiliza cookies para mejorar su experiencia.', 'Mantenimiento programado el sábado de 2:00 a 4:00.'],
  views: (n) => `${n} visitas`,
  updated: (d) => `Actualizado el ${d}`,
  crawled: (w) => `Página generada ${w}`,
  comments: (n) => `${n} comentarios`,
  widgetTitles: { recent: 'Entradas recientes', popular: 'Lo más leído', related: 'Artículos relacionados', tags: 'Etiquetas', newsletter: 'Boletín', social: 'Síguenos' },
  newsletter: ['Los mejores artículos cada semana en su correo.', 'Sin spam. Puede darse de baja cuando quiera.'],
  subscribe: 'Suscribirse',
  tags: ['linux', 'bases de datos', 'tutorial', 'seguridad', 'redes', 'configuración'],
};

const IT: ChromeWords = {
  ...EN,
  ad: 'Pubblicità',
  sponsored: 'Sponsorizzato',
  products: ['PostgreSQL gestito', 'hosting VPS', 'un gestore di password', 'il corso online «Python in 30 giorni»', 'cuffie con cancellazione del rumore', 'una scrivania regolabile'],
  offers: ['30% di sconto questa settimana', 'primo mese gratis', 'da 4,99 € al mese', 'spedizione gratuita sopra i 50 €'],
  ctas: ['Scopri di più', 'Acquista ora', 'Prova gratis'],
  banners: ['La nuova ricerca nella documentazione è online.', 'Questo sito utilizza i cookie.', 'Manutenzione programmata sabato dalle 2 alle 4.'],
  views: (n) => `${n} visualizzazioni`,
  updated: (d) => `Aggiornato il ${d}`,
  crawled: (w) => `Pagina generata ${w}`,
  comments: (n) => `${n} commenti`,
  widgetTitles: { recent: 'Articoli recenti', popular: 'I più letti', related: 'Articoli correlati', tags: 'Tag', newsletter: 'Newsletter', social: 'Seguici' },
  newsletter: ['I migliori articoli ogni settimana nella tua casella.', 'Niente spam, disiscrizione in qualsiasi momento.'],
  subscribe: 'Iscriviti',
  tags: ['linux', 'database', 'guida', 'sicurezza', 'rete', 'configurazione'],
};

const PT_BR: ChromeWords = {
  ...EN,
  ad: 'Publicidade',
  sponsored: 'Patrocinado',
  products: ['PostgreSQL gerenciado', 'hospedagem VPS', 'um gerenciador de senhas', 'o curso online "Python em 30 dias"', 'fones com cancelamento de ruído', 'uma mesa de altura regulável'],
  offers: ['30% de desconto nesta semana', 'primeiro mês grátis', 'a partir de R$ 19,90 por mês', 'frete grátis acima de R$ 200'],
  ctas: ['Saiba mais', 'Compre agora', 'Teste grátis'],
  banners: ['A nova busca na documentação já está no ar.', 'Este site usa cookies para melhorar sua experiência.', 'Manutenção programada no sábado das 2h às 4h.'],
  views: (n) => `${n} visualizações`,
  updated: (d) => `Atualizado em ${d}`,
  crawled: (w) => `Página gerada ${w}`,
  comments: (n) => `${n} comentários`,
  widgetTitles: { recent: 'Posts recentes', popular: 'Mais lidos', related: 'Artigos relacionados', tags: 'Tags', newsletter: 'Newsletter', social: 'Siga-nos' },
  newsletter: ['Os melhores artigos toda semana no seu e-mail.', 'Sem spam. Cancele quando quiser.'],
  subscribe: 'Assinar',
  tags: ['linux', 'banco de dados', 'tutorial', 'segurança', 'redes', 'configuração'],
};

const RU: ChromeWords = {
  ...EN,
  ad: 'Реклама',
  sponsored: 'Спонсорский материал',
  brands: ['ОблакоПро', 'БайтГавань', 'Стеквайз', 'ХостПилот', 'ДатаЛум', 'Северный ветер'],
  products: ['управляемый PostgreSQL', 'VPS-хостинг', 'менеджер паролей', 'онлайн-курс «Python за 30 дней»', 'наушники с шумоподавлением', 'стол для работы стоя'],
  offers: ['скидка 30% на этой неделе', 'первый месяц бесплатно', 'от 299 ₽ в месяц', 'бесплатная доставка от 3000 ₽'],
  ctas: ['Подробнее', 'Купить', 'Попробовать бесплатно'],
  banners: ['Новый поиск по документации уже работает.', 'Сайт использует файлы cookie.', 'Плановые работы в субботу с 2:00 до 4:00.'],
  views: (n) => `${n} просмотров`,
  updated: (d) => `Обновлено ${d}`,
  crawled: (w) => `Страница создана ${w}`,
  comments: (n) => `${n} комментариев`,
  widgetTitles: { recent: 'Новые записи', popular: 'Популярное', related: 'Похожие статьи', tags: 'Метки', newsletter: 'Рассылка', social: 'Мы в соцсетях' },
  newsletter: ['Лучшие статьи каждую неделю на вашу почту.', 'Без спама, отписаться можно в любой момент.'],
  subscribe: 'Подписаться',
  tags: ['linux', 'базы данных', 'руководство', 'безопасность', 'сети', 'настройка'],
};

const KO: ChromeWords = {
  ...EN,
  ad: '광고',
  sponsored: '스폰서',
  brands: ['클라우드님버스', '바이트하버', '스택와이즈', '호스트파일럿', '데이터룸'],
  products: ['클라우드 서버', '관리형 데이터베이스', '온라인 강의 「30일 만에 Python」', '노이즈 캔슬링 헤드폰', '스탠딩 데스크'],
  offers: ['첫 달 무료', '이번 주 30% 할인', '월 4,900원부터', '무료 배송'],
  ctas: ['자세히 보기', '지금 구매', '무료 체험'],
  banners: ['문서 검색이 새로워졌습니다.', '이 사이트는 쿠키를 사용합니다.', '토요일 오전 2시부터 4시까지 점검이 있습니다.'],
  views: (n) => `조회 ${n}회`,
  updated: (d) => `최종 수정일 ${d}`,
  crawled: (w) => `페이지 생성 ${w}`,
  comments: (n) => `댓글 ${n}개`,
  widgetTitles: { recent: '최근 글', popular: '인기 글', related: '관련 글', tags: '태그', newsletter: '뉴스레터', social: '팔로우하기' },
  newsletter: ['매주 좋은 글을 메일로 보내 드립니다.', '언제든지 수신을 거부할 수 있습니다.'],
  subscribe: '구독',
  tags: ['Linux', '데이터베이스', '튜토리얼', '보안', '네트워크', '설정'],
};

const BY_LANGUAGE: Record<string, ChromeWords> = { en: EN, 'zh-cn': ZH_CN, 'zh-tw': ZH_TW, ja: JA, de: DE, fr: FR, es: ES, it: IT, 'pt-br': PT_BR, ru: RU, ko: KO };

export function chromeWords(language: string): ChromeWords {
  return BY_LANGUAGE[language] ?? EN;
}
