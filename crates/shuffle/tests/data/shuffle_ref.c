/*
 * Independent C reference for scalrand-shuffle's kernel-faithful paths.
 *
 * Written for this project from the Linux 5.2-era sources' semantics (mm/page_alloc.c
 * __free_pages_memory / __free_one_page / buddy_merge_likely, include/linux/list.h
 * list_add / list_add_tail / list_del / list_replace / list_swap, mm/shuffle.c
 * __shuffle_zone / shuffle_valid_page), with kernel-style intrusive list_heads and no code
 * shared with the Rust crate. The random source is SplitMix64 (Steele, Lea, Flood 2014;
 * the constants of Vigna's splitmix64.c) standing in for get_random_long().
 *
 * Build and regenerate the expected output (committed as shuffle_ref.out):
 *     gcc -O2 -std=c99 -o /tmp/shuffle_ref tests/data/shuffle_ref.c
 *     /tmp/shuffle_ref > tests/data/shuffle_ref.out
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define MAX_ORDER 11 /* kernel's MAX_ORDER: orders 0..10 */
#define PAGEBLOCK_ORDER 9
#define NR_MT 3
#define SHUFFLE_RETRY 10

struct list_head { struct list_head *next, *prev; };

static void INIT_LIST_HEAD(struct list_head *l) { l->next = l; l->prev = l; }
static void __list_add(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	next->prev = n; n->next = next; n->prev = prev; prev->next = n;
}
static void list_add(struct list_head *n, struct list_head *h) { __list_add(n, h, h->next); }
static void list_add_tail(struct list_head *n, struct list_head *h) { __list_add(n, h->prev, h); }
static void list_del(struct list_head *e) { e->next->prev = e->prev; e->prev->next = e->next; }
static void list_replace(struct list_head *old, struct list_head *n)
{
	n->next = old->next; n->next->prev = n; n->prev = old->prev; n->prev->next = n;
}
static void list_swap(struct list_head *e1, struct list_head *e2)
{
	struct list_head *pos = e2->prev;
	list_del(e2);
	list_replace(e1, e2);
	if (pos == e1)
		pos = e2;
	list_add(e1, pos);
}

struct page {
	struct list_head lru; /* must be first */
	int present, buddy, order;
};

struct zone {
	unsigned long start, spanned;
	struct page *pages;
	int *pb_mt; /* per pageblock, indexed by (pfn >> 9) - (start >> 9) */
	struct list_head free_list[MAX_ORDER][NR_MT];
};

static uint64_t sm_state;
static unsigned long words;
static uint64_t get_random_long(void)
{
	uint64_t z = (sm_state += 0x9e3779b97f4a7c15ULL);
	words++;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static struct page *pfn_page(struct zone *z, unsigned long pfn)
{
	if (pfn < z->start || pfn >= z->start + z->spanned)
		return NULL;
	return &z->pages[pfn - z->start];
}
static int mt_of(struct zone *z, unsigned long pfn)
{
	return z->pb_mt[(pfn >> PAGEBLOCK_ORDER) - (z->start >> PAGEBLOCK_ORDER)];
}
static int page_is_buddy(struct page *p, int order) { return p && p->present && p->buddy && p->order == order; }

static void free_one_page(struct zone *z, unsigned long pfn, int order)
{
	unsigned long buddy_pfn = 0;
	struct page *buddy;
	int to_tail = 0;
	while (order < MAX_ORDER - 1) {
		buddy_pfn = pfn ^ (1UL << order);
		buddy = pfn_page(z, buddy_pfn);
		if (!page_is_buddy(buddy, order))
			break;
		list_del(&buddy->lru);
		buddy->buddy = 0;
		buddy->order = 0;
		pfn &= buddy_pfn;
		order++;
	}
	buddy_pfn = pfn ^ (1UL << order);
	struct page *page = pfn_page(z, pfn);
	page->buddy = 1;
	page->order = order;
	if (order < MAX_ORDER - 2) { /* buddy_merge_likely */
		unsigned long combined = buddy_pfn & pfn;
		unsigned long hb = combined ^ (1UL << (order + 1));
		to_tail = page_is_buddy(pfn_page(z, hb), order + 1);
	}
	if (to_tail)
		list_add_tail(&page->lru, &z->free_list[order][mt_of(z, pfn)]);
	else
		list_add(&page->lru, &z->free_list[order][mt_of(z, pfn)]);
}

static void boot(struct zone *z)
{
	unsigned long pfn = z->start, end = z->start + z->spanned;
	while (pfn < end) {
		if (!pfn_page(z, pfn)->present) { pfn++; continue; }
		unsigned long run = pfn;
		while (run < end && pfn_page(z, run)->present)
			run++;
		unsigned long s = pfn;
		while (s < run) {
			int order = s ? __builtin_ctzl(s) : MAX_ORDER - 1;
			if (order > MAX_ORDER - 1)
				order = MAX_ORDER - 1;
			while (s + (1UL << order) > run)
				order--;
			free_one_page(z, s, order);
			s += 1UL << order;
		}
		pfn = run;
	}
}

static struct page *shuffle_valid_page(struct zone *z, unsigned long pfn, int order)
{
	struct page *p = pfn_page(z, pfn);
	if (!p || !p->present || !p->buddy || p->order != order)
		return NULL;
	return p;
}

static unsigned long nswaps;
static void shuffle_zone(struct zone *z, int order)
{
	unsigned long i, order_pages = 1UL << order;
	unsigned long start_pfn = (z->start + order_pages - 1) & ~(order_pages - 1);
	unsigned long end_pfn = z->start + z->spanned;
	for (i = start_pfn; i < end_pfn; i += order_pages) {
		unsigned long j;
		int retry;
		struct page *page_i, *page_j = NULL;
		page_i = shuffle_valid_page(z, i, order);
		if (!page_i)
			continue;
		for (retry = 0; retry < SHUFFLE_RETRY; retry++) {
			j = z->start + ((get_random_long() % z->spanned) & ~(order_pages - 1));
			page_j = shuffle_valid_page(z, j, order);
			if (page_j && page_j != page_i)
				break;
		}
		if (retry >= SHUFFLE_RETRY)
			continue;
		if (mt_of(z, i) != mt_of(z, j))
			continue;
		list_swap(&page_i->lru, &page_j->lru);
		nswaps++;
	}
}

static void print_lists(struct zone *z, const char *tag)
{
	for (int o = 0; o < MAX_ORDER; o++)
		for (int mt = 0; mt < NR_MT; mt++) {
			struct list_head *h = &z->free_list[o][mt];
			if (h->next == h)
				continue;
			printf("%s o%d m%d:", tag, o, mt);
			for (struct list_head *l = h->next; l != h; l = l->next) {
				struct page *p = (struct page *)l;
				printf(" %lx", z->start + (unsigned long)(p - z->pages));
			}
			printf("\n");
		}
}

/* A scenario: span, holes (pairs), unmovable ranges (pairs), shuffle order, seed. */
struct scenario {
	unsigned long start, spanned;
	unsigned long holes[8][2]; int nholes;
	unsigned long unmovable[4][2]; int nunmov;
	int order;
	uint64_t seed;
	int rounds;
};

static void run(int id, const struct scenario *sc)
{
	struct zone z;
	memset(&z, 0, sizeof(z));
	z.start = sc->start;
	z.spanned = sc->spanned;
	z.pages = calloc(sc->spanned, sizeof(struct page));
	unsigned long nb = ((sc->start + sc->spanned - 1) >> PAGEBLOCK_ORDER) - (sc->start >> PAGEBLOCK_ORDER) + 1;
	z.pb_mt = calloc(nb, sizeof(int));
	for (unsigned long b = 0; b < nb; b++)
		z.pb_mt[b] = 1; /* movable */
	for (int k = 0; k < sc->nunmov; k++)
		for (unsigned long p = sc->unmovable[k][0]; p < sc->unmovable[k][1]; p++)
			z.pb_mt[(p >> PAGEBLOCK_ORDER) - (sc->start >> PAGEBLOCK_ORDER)] = 0;
	for (unsigned long p = 0; p < sc->spanned; p++)
		z.pages[p].present = 1;
	for (int k = 0; k < sc->nholes; k++)
		for (unsigned long p = sc->holes[k][0]; p < sc->holes[k][1]; p++)
			z.pages[p - sc->start].present = 0;
	for (int o = 0; o < MAX_ORDER; o++)
		for (int mt = 0; mt < NR_MT; mt++)
			INIT_LIST_HEAD(&z.free_list[o][mt]);
	boot(&z);
	char tag[32];
	snprintf(tag, sizeof tag, "S%d boot", id);
	print_lists(&z, tag);
	sm_state = sc->seed;
	words = 0;
	nswaps = 0;
	for (int r = 0; r < sc->rounds; r++)
		shuffle_zone(&z, sc->order);
	printf("S%d words %lu swaps %lu\n", id, words, nswaps);
	snprintf(tag, sizeof tag, "S%d shuf", id);
	print_lists(&z, tag);
	free(z.pages);
	free(z.pb_mt);
}

int main(void)
{
	static const struct scenario sc[] = {
		/* 0: 16 aligned order-10 blocks */
		{ 0, 16 * 1024, {{0}}, 0, {{0}}, 0, 10, 42, 1 },
		/* 1: misaligned start: never shuffled */
		{ 512, 16 * 1024, {{0}}, 0, {{0}}, 0, 10, 43, 1 },
		/* 2: holes and unmovable pageblocks, three rounds */
		{ 0x40000, 32 * 1024,
		  {{0x40000 + 3 * 1024, 0x40000 + 4 * 1024}, {0x40000 + 10 * 1024 + 100, 0x40000 + 10 * 1024 + 200}}, 2,
		  {{0x40000 + 5 * 1024, 0x40000 + 8 * 1024}}, 1, 10, 44, 3 },
		/* 3: low half of every block a hole: order-9 blocks, shuffle order 9 */
		{ 0, 8 * 1024,
		  {{0, 512}, {1024, 1536}, {2048, 2560}, {3072, 3584}, {4096, 4608}, {5120, 5632}, {6144, 6656}, {7168, 7680}}, 8,
		  {{0}}, 0, 9, 45, 1 },
		/* 4: ragged end, start not at zero, order 10 */
		{ 1024, 20 * 1024 + 300, {{0}}, 0, {{0}}, 0, 10, 46, 2 },
		/* 5: ragged end shuffled at order 2 (the tail pieces) */
		{ 1024, 20 * 1024 + 300, {{0}}, 0, {{0}}, 0, 2, 47, 1 },
	};
	for (unsigned i = 0; i < sizeof sc / sizeof sc[0]; i++)
		run((int)i, &sc[i]);
	return 0;
}
