// SPDX-License-Identifier: GPL-2.0
/*
 * C++ through adimalloc: new/delete reach malloc/free.
 *   bugs_cxx overflow | uaf | ok
 */
#include <cstdio>
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
	else
		containers();
	return 0;
}
