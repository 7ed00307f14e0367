// SPDX-License-Identifier: GPL-2.0
/*
 * C++ through adimalloc: operator new/delete are adimalloc's.
 *   bugs_cxx overflow | uaf | new_array_delete | new_free | malloc_delete
 *            [ok]
 * The mismatches are called through volatile pointers so that the
 * compiler, which sees them, still emits them.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

struct Node {
	long key;
	std::string name;
};

__attribute__((noinline)) void cxx_overflow(bool ok)
{
	int *a = new int[16];

	for (int i = 0; i < 16; i++)
		a[i] = i;
	std::fprintf(stderr, "bug: ptr=%p size=64 at=%p\n", (void *)a, (void *)(a + 16));
	a[ok ? 15 : 16] = 99;
	std::printf("overflow %d\n", a[15]);
	delete[] a;
}

__attribute__((noinline)) void cxx_uaf(bool ok)
{
	Node *n = new Node{42, "forty-two"};
	Node *m = ok ? new Node{42, "forty-two"} : n;

	delete n;
	std::fprintf(stderr, "bug: ptr=%p size=%zu at=%p\n", (void *)m, sizeof(Node),
		     (void *)&m->key);
	std::printf("uaf %ld\n", m->key);
	if (ok)
		delete m;
}

static void (*volatile free_fn)(void *) = std::free;

__attribute__((noinline)) void cxx_new_array_delete(bool ok)
{
	int *a = new int[4];

	a[0] = 4;
	std::fprintf(stderr, "bug: ptr=%p size=16 at=%p\n", (void *)a, (void *)a);
	std::printf("new_array_delete %d\n", a[0]);
	if (ok) {
		delete[] a;
	} else {
		int *volatile p = a;

		delete p;	/* delete of a new[] block */
	}
}

__attribute__((noinline)) void cxx_new_free(bool ok)
{
	long *n = new long(5);

	std::fprintf(stderr, "bug: ptr=%p size=8 at=%p\n", (void *)n, (void *)n);
	std::printf("new_free %ld\n", *n);
	if (ok)
		delete n;
	else
		free_fn(n);
}

__attribute__((noinline)) void cxx_malloc_delete(bool ok)
{
	long *m = static_cast<long *>(std::malloc(sizeof(long)));

	*m = 6;
	std::fprintf(stderr, "bug: ptr=%p size=8 at=%p\n", (void *)m, (void *)m);
	std::printf("malloc_delete %ld\n", *m);
	if (ok) {
		free_fn(m);
	} else {
		long *volatile p = m;

		delete p;
	}
}

static void containers()
{
	std::vector<std::string> v;
	std::map<std::string, int> count;

	for (int i = 0; i < 200; i++) {
		v.push_back("item-" + std::to_string(i * 37 % 101));
		count[v.back()]++;
	}
	std::string joined;
	for (auto &kv : count)
		joined += kv.first + "=" + std::to_string(kv.second) + ";";
	std::printf("containers %zu %zu %zu\n", v.size(), count.size(), joined.size());
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "ok";
	bool ok = argc > 2 && !std::strcmp(argv[2], "ok");

	if (!std::strcmp(what, "overflow"))
		cxx_overflow(ok);
	else if (!std::strcmp(what, "uaf"))
		cxx_uaf(ok);
	else if (!std::strcmp(what, "new_array_delete"))
		cxx_new_array_delete(ok);
	else if (!std::strcmp(what, "new_free"))
		cxx_new_free(ok);
	else if (!std::strcmp(what, "malloc_delete"))
		cxx_malloc_delete(ok);
	else
		containers();
	return 0;
}
