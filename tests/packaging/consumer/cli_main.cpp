// A downstream program of the cputrain::cli component: reads Hugging Face's run_qa flags (an older alias among them),
// refuses an incomplete command line with a message naming the flag, and hands the trainer its options.
#include <cputrain/cli.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

int main() {
  const std::filesystem::path train_file = std::filesystem::temp_directory_path() / "cputrain_consumer_cli_train.json";
  std::ofstream(train_file) << "{\"version\": \"v2.0\", \"data\": []}\n";
  const std::string train = train_file.string();
  const std::string model_dir = std::filesystem::temp_directory_path().string();  // a directory, as the flag needs
  const char* argv[] = {"consumer_cli", "--output_dir", "out", "--do_train", "--train_file", train.c_str(),
                        "--learning_rate", "3e-5", "--per_device_train_batch_size", "12", "--no_cuda",
                        "--model_name_or_path", model_dir.c_str()};
  const cputrain::cli::parsed_command_line parsed =
      cputrain::cli::parse_training_args(static_cast<int>(std::size(argv)), argv);
  const cputrain::train::training_options options = cputrain::cli::to_training_options(parsed.args);
  std::string refusal;
  try {
    const char* incomplete[] = {"consumer_cli", "--output_dir", "out", "--do_train", "--model_name_or_path", "bert"};
    (void)cputrain::cli::parse_training_args(static_cast<int>(std::size(incomplete)), incomplete);
  } catch (const cputrain::usage_error& e) {
    refusal = e.what();
  }
  std::filesystem::remove(train_file);
  std::printf("consumer_cli: lr %g, batch %d, output_dir %s; refused: %s\n", options.learning_rate,
              options.per_device_train_batch_size, options.output_dir.c_str(), refusal.c_str());
  return options.per_device_train_batch_size == 12 && options.learning_rate == 3e-5 && !refusal.empty() ? 0 : 1;
}
