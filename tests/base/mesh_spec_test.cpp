// Mesh spec grammar and its error messages (base/README.md BASE-3).
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/text.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace base = convoy::base;
using base::level;
using base::mesh_spec;

namespace {

// The message parse_mesh_spec throws for `spec`, or "" if it does not throw.
std::string message_of(const std::string& spec) {
  try {
    (void)base::parse_mesh_spec(spec);
  } catch (const convoy::error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MeshSpec, AutoIsTheDefaultForm) {  // BASE-3
  EXPECT_EQ(base::parse_mesh_spec("auto"), mesh_spec::automatic());
  EXPECT_EQ(base::parse_mesh_spec("  auto "), mesh_spec::automatic());
  EXPECT_EQ(mesh_spec{}, mesh_spec::automatic());
}

TEST(MeshSpec, CartesianShapes) {  // BASE-3
  EXPECT_EQ(base::parse_mesh_spec("8x4x2"), mesh_spec::cartesian({8, 4, 2}));
  EXPECT_EQ(base::parse_mesh_spec("16"), mesh_spec::cartesian({16}));
  EXPECT_EQ(base::parse_mesh_spec("1x8"), mesh_spec::cartesian({1, 8}));
  EXPECT_EQ(base::parse_mesh_spec("3X3"), mesh_spec::cartesian({3, 3}));
}

TEST(MeshSpec, NamedLevels) {  // BASE-3
  EXPECT_EQ(base::parse_mesh_spec("node,socket,core"),
            mesh_spec::of_levels({level::node, level::socket, level::core}));
  EXPECT_EQ(base::parse_mesh_spec("node,core"), mesh_spec::of_levels({level::node, level::core}));
  EXPECT_EQ(base::parse_mesh_spec("node"), mesh_spec::of_levels({level::node}));
  EXPECT_EQ(base::parse_mesh_spec("socket,core"),
            mesh_spec::of_levels({level::socket, level::core}));
  EXPECT_EQ(base::parse_mesh_spec("node, numa ,core"),
            mesh_spec::of_levels({level::node, level::numa, level::core}));
  EXPECT_EQ(base::parse_mesh_spec("package,core"),
            mesh_spec::of_levels({level::socket, level::core}));
}

TEST(MeshSpec, ToStringRoundTrips) {  // BASE-3
  for (const char* s : {"auto", "8x4x2", "16", "node,socket,core", "node", "socket,numa,core"}) {
    const auto spec = base::parse_mesh_spec(s);
    EXPECT_EQ(base::to_string(spec), s);
    EXPECT_EQ(base::parse_mesh_spec(base::to_string(spec)), spec);
  }
}

// One test per invalid spec: the message quotes the spec and names the problem.
TEST(MeshSpecInvalid, Empty) {  // BASE-3
  EXPECT_EQ(message_of(""),
            "mesh spec '': is empty (expected auto, a shape like 8x4x2, or levels like node,core)");
  EXPECT_EQ(message_of("   "),
            "mesh spec '   ': is empty (expected auto, a shape like 8x4x2, or levels like "
            "node,core)");
}

TEST(MeshSpecInvalid, TrailingX) {  // BASE-3
  EXPECT_EQ(message_of("8x"), "mesh spec '8x': size 2 is empty (expected sizes like 8x4x2)");
}

TEST(MeshSpecInvalid, LeadingX) {  // BASE-3
  EXPECT_EQ(message_of("x4"), "mesh spec 'x4': size 1 is empty (expected sizes like 8x4x2)");
}

TEST(MeshSpecInvalid, DoubleX) {  // BASE-3
  EXPECT_EQ(message_of("8xx2"), "mesh spec '8xx2': size 2 is empty (expected sizes like 8x4x2)");
}

TEST(MeshSpecInvalid, ZeroSize) {  // BASE-3
  EXPECT_EQ(message_of("8x0x2"), "mesh spec '8x0x2': size 2 is zero; sizes must be >= 1");
  EXPECT_EQ(message_of("0"), "mesh spec '0': size 1 is zero; sizes must be >= 1");
}

TEST(MeshSpecInvalid, NegativeSize) {  // BASE-3
  EXPECT_EQ(message_of("-4x2"), "mesh spec '-4x2': size 1 is negative (-4); sizes must be >= 1");
  EXPECT_EQ(message_of("4x-2"), "mesh spec '4x-2': size 2 is negative (-2); sizes must be >= 1");
}

TEST(MeshSpecInvalid, SizeNotANumber) {  // BASE-3
  EXPECT_EQ(message_of("4x2.5"), "mesh spec '4x2.5': size 2 '2.5' is not a number");
  EXPECT_EQ(message_of("4x 2 2"), "mesh spec '4x 2 2': size 2 '2 2' is not a number");
}

TEST(MeshSpecInvalid, SizeTooLarge) {  // BASE-3
  EXPECT_EQ(message_of("99999999999"),
            "mesh spec '99999999999': size 1 '99999999999' is too large");
}

TEST(MeshSpecInvalid, Garbage) {  // BASE-3
  EXPECT_EQ(message_of("abc"),
            "mesh spec 'abc': unknown level 'abc' (expected auto, a shape like 8x4x2, or levels "
            "from node, socket, numa, core)");
}

TEST(MeshSpecInvalid, UnknownLevel) {  // BASE-3
  EXPECT_EQ(message_of("node,rack"),
            "mesh spec 'node,rack': unknown level 'rack' (expected auto, a shape like 8x4x2, or "
            "levels from node, socket, numa, core)");
}

TEST(MeshSpecInvalid, RepeatedLevel) {  // BASE-3
  EXPECT_EQ(message_of("node,core,core"), "mesh spec 'node,core,core': level 'core' is repeated");
}

TEST(MeshSpecInvalid, LevelsOutOfOrder) {  // BASE-3
  EXPECT_EQ(message_of("core,node"),
            "mesh spec 'core,node': level 'node' comes after 'core'; levels go from outermost to "
            "innermost: node, socket, numa, core");
}

TEST(MeshSpecInvalid, EmptyLevel) {  // BASE-3
  EXPECT_EQ(message_of("node,,core"),
            "mesh spec 'node,,core': level 2 is empty (expected levels like node,socket,core)");
  EXPECT_EQ(message_of("node,"),
            "mesh spec 'node,': level 2 is empty (expected levels like node,socket,core)");
}

TEST(MeshSpecInvalid, ShapeMixedWithLevels) {  // BASE-3
  EXPECT_EQ(message_of("8x4,core"),
            "mesh spec '8x4,core': mixes a Cartesian size ('8x4') with named levels; use either a "
            "shape like 8x4x2 or levels like node,core");
}

TEST(MeshSpecInvalid, CommaSeparatedSizes) {  // BASE-3
  EXPECT_EQ(message_of("4,2"), "mesh spec '4,2': a shape separates sizes with 'x', not ','");
}

// The text of shapes, orders and level lists: numbers and strings joined by a separator.
TEST(Text, JoinsNumbersAndStrings) {
  EXPECT_EQ(base::join(std::vector<int>{4, 2, 16}, "x"), "4x2x16");
  EXPECT_EQ(base::join(std::vector<int>{7}, ","), "7");
  EXPECT_EQ(base::join(std::vector<int>{}, ","), "");
  EXPECT_EQ(base::join(std::vector<std::string_view>{"node", "core"}, ", "), "node, core");
  EXPECT_EQ(base::join(std::vector<std::string>{"", ""}, "+"), "+");
}
