// Two members of the intervalset library's API that batsched 1.4.0 calls and the intervalset
// re-implementation of the real Batsim 4.2.1 build lacks (build-batsched.sh declares them in its copy of
// that header; the struct's layout is unchanged). Semantics of the intervalset library's (v1.2.0):
//   biggest_interval(): iterator to the first of the largest closed intervals (intervals_end() if empty);
//   random_pick(n): n distinct elements drawn uniformly at random, seeded from std::random_device (so not
//     reproducible, as upstream); std::out_of_range when the set holds fewer. Only batsched's `random`
//     variant calls it; no test here runs that variant.
#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include <intervalset.hpp>

IntervalSet::Set::const_iterator IntervalSet::biggest_interval() const
{
    auto best = intervals_end();
    int best_size = 0;
    for (auto it = intervals_begin(); it != intervals_end(); ++it) {
        int n = it->upper() - it->lower() + 1;
        if (n > best_size) {
            best = it;
            best_size = n;
        }
    }
    return best;
}

IntervalSet IntervalSet::random_pick(unsigned int nb_elements) const
{
    if (size() < nb_elements)
        throw std::out_of_range("IntervalSet::random_pick: fewer elements than asked for");
    std::vector<int> all(elements_begin(), elements_end());
    std::random_device seed;
    std::mt19937 rng(seed());
    std::shuffle(all.begin(), all.end(), rng);
    IntervalSet picked;
    for (unsigned int i = 0; i < nb_elements; ++i)
        picked.insert(all[i]);
    return picked;
}
