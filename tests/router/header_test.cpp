// Each public header of router/ compiles on its own (header_*.cpp include one each first).
#include <gtest/gtest.h>

TEST(Headers, SelfContained) { SUCCEED(); }
