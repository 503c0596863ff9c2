// The --plot loss curve: one polyline point per finite step, breaks at non-finite values,
// round tick labels covering the values, escaped text, byte-identical output for equal input.
#include "train/loss_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// The points="..." of each polyline, as counts of x,y pairs.
std::vector<int> PolylinePoints(const std::string& svg) {
  std::vector<int> counts;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) {
    const size_t begin = svg.find("points=\"", at) + 8;
    const std::string points = svg.substr(begin, svg.find('"', begin) - begin);
    counts.push_back(Count(points, ","));
  }
  return counts;
}

TEST(LossPlotTest, OnePointPerStepAndRoundTicksAroundTheValues) {
  const std::vector<double> losses = {3.27, 3.05, 2.4, 1.1, 0.62};
  const std::string svg = LossPlotSvg("gshard_moe: loss per step on 8 devices", "loss", losses);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(PolylinePoints(svg), std::vector<int>{5});
  // Ticks every 1 from 0 to 4 cover [0.62, 3.27].
  const std::string y_label = "dominant-baseline=\"middle\">";
  for (const char* label : {"0<", "1<", "2<", "3<", "4<"}) EXPECT_NE(svg.find(y_label + label), std::string::npos) << label;
  EXPECT_EQ(svg.find(y_label + "5<"), std::string::npos);
  EXPECT_EQ(svg.find(y_label + "0.5<"), std::string::npos);
  EXPECT_EQ(Count(svg, y_label), 5);
  EXPECT_NE(svg.find("<title>step 5: loss 0.62</title>"), std::string::npos);
  EXPECT_EQ(svg, LossPlotSvg("gshard_moe: loss per step on 8 devices", "loss", losses)) << "deterministic";
  EXPECT_EQ(svg.find("<script"), std::string::npos);
}

TEST(LossPlotTest, NonFiniteValuesBreakTheLineAndTextIsEscaped) {
  const std::string svg = LossPlotSvg("a<b & \"c\"", "loss", {2, 1.5, NAN, 1, 0.5, INFINITY});
  EXPECT_EQ(PolylinePoints(svg), (std::vector<int>{2, 2}));
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<circle"), std::string::npos) << "no marker on a non-finite last value";
  // A constant curve and a single step still get a drawable range.
  EXPECT_EQ(PolylinePoints(LossPlotSvg("t", "loss", {1, 1, 1})), std::vector<int>{3});
  EXPECT_EQ(PolylinePoints(LossPlotSvg("t", "loss", {7})), std::vector<int>{1});
  const std::string empty = LossPlotSvg("t", "loss", {});
  for (const char* bad : {"\"nan", "\"-nan", ">nan", "\"inf", ">inf"}) EXPECT_EQ(empty.find(bad), std::string::npos) << bad;
}

TEST(LossPlotTest, PlotPathMustBeAnSvgInAnExistingDirectory) {
  EXPECT_NO_THROW(CheckPlotPath("curve.svg"));
  EXPECT_THROW(CheckPlotPath("curve.png"), UserError);
  EXPECT_THROW(CheckPlotPath("/no/such/dir/curve.svg"), UserError);
}

}  // namespace
}  // namespace gspmd
